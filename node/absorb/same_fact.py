"""Whether two texts say the same fact, word for word once filler is set aside.

A near-duplicate writes nothing, so a wrong "same" loses what the user said: "I take 5 mg of
melatonin" and "I take 5 g of melatonin" are one cosine apart from nothing, and so are "the
left flowerpot" and "the right flowerpot", "open" and "closed", "Dr. Chen" and "Dr. Lee". So
two texts are the same fact only when their *content tokens*, in order, are equal: every
number, unit, name, negation, preposition and antonym must agree. What may differ is filler
("really", "a lot", articles, the verb "to be"), a plural ``s``, a company suffix ("Acme
Corp") and a few plain synonyms ("love" for "like"). Anything else is kept as a distinct fact
and linked to the close one (``related_to``): when unsure, keep both.

Pure and deterministic: every device decides the same.
"""

from __future__ import annotations

import re

__all__ = ["FILLER", "SYNONYMS", "content_tokens", "hard_tokens", "same_fact"]

FILLER = frozenset(
    """a an the is are was were be been am i me my mine myself of to it its this that
    really very much lot so quite just also too indeed truly totally absolutely actually
    definitely do does did have has had user note please corp inc ltd llc co
    and""".split()
)
"""Words whose presence or absence never changes what a fact says."""

SYNONYMS = {
    "love": "like",
    "adore": "like",
    "enjoy": "like",
    "mom": "mother",
    "mum": "mother",
    "mummy": "mother",
    "dad": "father",
    "daddy": "father",
    "kid": "child",
    "children": "child",
    "colour": "color",
    "favourite": "favorite",
    "i'm": "am",
    "1st": "first",
    "2nd": "second",
    "3rd": "third",
    "4th": "fourth",
}
"""Plain synonyms and spellings folded onto one word (checked after the plural ``s``)."""

_WORD = re.compile(r"[\w'’.@+-]+")
_EDGE = ".'’-"


def _token(word: str) -> str:
    word = word.casefold().replace("’", "'").strip(_EDGE)
    if word.endswith("'s"):
        word = word[:-2]
    if word in FILLER:
        return word
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return SYNONYMS.get(word, word)


def content_tokens(text: str) -> tuple[str, ...]:
    """The text's words that carry meaning, in order: case folded, ``_`` read as a space,
    filler left out, plurals and the synonyms of :data:`SYNONYMS` folded."""
    words = (_token(w) for w in _WORD.findall(text.replace("_", " ")))
    return tuple(w for w in words if w and w not in FILLER)


def same_fact(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` say the same thing (see the module docstring): the same content
    tokens in the same order, so "Bob owes Alice 5 euros" is not "Alice owes Bob 5 euros" nor
    "I owe the dentist" "the dentist owes me". Two texts with no content tokens are never the
    same (there is nothing to compare)."""
    left = content_tokens(a)
    return bool(left) and left == content_tokens(b)


_NEGATIONS = frozenset("not no never nor cannot can't don't doesn't isn't won't without".split())


def hard_tokens(text: str) -> frozenset[str]:
    """What no rephrasing changes: numbers with the unit after each ("5 mg"), negations, and
    names (capitalised words but the first). Two texts that differ here are two facts, whoever
    says otherwise (an LLM classifier's "duplicate" included: node/absorb/pipeline.py)."""
    words = _WORD.findall(text.replace("_", " "))
    found: set[str] = set()
    for at, word in enumerate(words):
        token = _token(word)
        if any(c.isdigit() for c in token):
            found.add(token)
            if at + 1 < len(words):
                found.add(_token(words[at + 1]))
        elif word.casefold() in _NEGATIONS or (
            at > 0 and word[:1].isupper() and token not in FILLER
        ):
            found.add(token)
    return frozenset(found)
