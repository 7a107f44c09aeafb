"""Whether two texts say the same fact, word for word once filler is set aside.

A near-duplicate writes nothing, so a wrong "same" loses what the user said: "I take 5 mg of
melatonin" and "I take 5 g of melatonin" are one cosine apart from nothing, and so are "the
left flowerpot" and "the right flowerpot", "open" and "closed", "Dr. Chen" and "Dr. Lee". So
two texts are the same fact only when their *content tokens*, in order, are equal: every
number, unit, name, negation, preposition and antonym must agree. What may differ is filler
("really", "a lot", articles, the verb "to be"), case and accents ("crème", "CREME"), a
plural ``s``, a company suffix ("Acme Corp"), a few plain synonyms ("love" for "like"), a
present-tense contraction ("don't" for "do not"), a number from two to twelve written as a
word, a reminder's opening ("remember to ..."), a date's order and ordinal ("30 April",
"April 30th") and where a time is said ("every morning I drink coffee": only a block of time
words moves). Anything else is kept as a distinct fact and linked to the close one
(``related_to``): when unsure, keep both.

Pure and deterministic: every device decides the same.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "FILLER",
    "SYNONYMS",
    "content_tokens",
    "fold",
    "hard_tokens",
    "opposite_fact",
    "same_fact",
    "same_value",
]

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
    "i've": "have",
    "don't": "not",
    "doesn't": "not",
    "isn't": "not",
    "aren't": "not",
    "can't": "cannot",
    "grey": "gray",
    "st": "saint",
    **{
        word: str(n)
        for n, word in enumerate(
            "two three four five six seven eight nine ten eleven twelve".split(), 2
        )
    },
}
"""Plain synonyms and spellings folded onto one word (checked after the plural ``s``)."""

_WORD = re.compile(r"[\w'’.@+-]+")
_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")
"""A day said as an ordinal ("June 12th") is the day's number (the small ones are words)."""
_MONTHS = frozenset(
    """january february march april may june july august september october november
    december jan feb mar apr jun jul aug sep sept oct nov dec""".split()
)
_EDGE = ".'’-"


_UNDECOMPOSED = str.maketrans(
    {"ø": "o", "ł": "l", "đ": "d", "ß": "ss", "æ": "ae", "œ": "oe", "ı": "i"}
)
"""Letters Unicode does not split into a base and an accent."""


def fold(text: str) -> str:
    """``text`` case folded and without its accents: "São Paulo", "SAO PAULO" and "Sao Paulo"
    are one place said three ways (a user typing without accents, or in capitals, repeats a
    value; never a new one)."""
    parts = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in parts if not unicodedata.combining(c)).translate(_UNDECOMPOSED)


_BRITISH = (
    (re.compile(r"(?<=[a-z]{3})our(?=(?:s|ed|ing|hood|ful|ite|able|ably|er)?$)"), "or"),
    (re.compile(r"(?<=[a-z]{3})is(?=(?:e|ed|es|ing|ation|er)$)"), "iz"),
    (re.compile(r"(?<=[a-z]{2})ys(?=(?:e|ed|es|ing)$)"), "yz"),
    (re.compile(r"(?<=[a-z]{3})tre$"), "ter"),
)
"""British endings in their American spelling ("neighbourhood", "organise", "analyse",
"centre"): one word spelled two ways. Applied alike to both texts, so a word that only looks
British ("promise") is changed the same way on both sides."""


def _spelling(word: str) -> str:
    for ending, american in _BRITISH:
        word = ending.sub(american, word)
    return word


_DAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())


def _token(word: str) -> str:
    word = fold(word).replace("’", "'").strip(_EDGE)
    if word.endswith("'s"):
        word = word[:-2]
    if word in FILLER:
        return word
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    word = _spelling(SYNONYMS.get(word, word))
    return ordinal[1] if (ordinal := _ORDINAL.fullmatch(word)) else word


_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_TWELVE_HOUR = re.compile(r"\b(\d{1,2})(?:[:.](\d{2}))?\s*([ap])\.?m\b\.?", re.I)
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_NUMBER_UNIT = re.compile(r"(\d)(?!(?:st|nd|rd|th)\b)([^\W\d_]+)\b")


def _numbers_written_alike(text: str) -> str:
    """Numbers and times written one way: "10,000" as "10000", "20mg" as "20 mg", "7:30 pm",
    "7.30pm" and "19:30" as "19:30", "8 am" as "08:00" (a time without am or pm stays as
    said: "at 3" may be either)."""
    text = _THOUSANDS.sub("", text)

    def twelve_hour(match: re.Match[str]) -> str:
        hour = int(match[1]) % 12 + (12 if match[3].casefold() == "p" else 0)
        return f"{hour:02d}:{match[2] or '00'}"

    text = _TWELVE_HOUR.sub(twelve_hour, text)
    text = _CLOCK.sub(lambda m: f"{int(m[1]):02d}:{m[2]}", text)
    return _NUMBER_UNIT.sub(r"\1 \2", text)


_REMINDERS = (("remember",), ("not", "forget"))
"""A reminder's opening: "remember to call mum" asks for what "call mum" says."""

_TIME_WORDS = frozenset(
    """every each on at in during before after monday tuesday wednesday thursday friday
    saturday sunday weekend weekday morning afternoon evening night day week month year
    daily weekly monthly nightly tonight today tomorrow noon midnight am pm""".split()
)
"""The words of a block that says when ("every morning", "on Tuesday night", "at 7")."""


def content_tokens(text: str) -> tuple[str, ...]:
    """The text's words that carry meaning, in order: case folded, ``_`` read as a space,
    filler left out, plurals and the synonyms of :data:`SYNONYMS` folded, a reminder's opening
    dropped."""
    text = _numbers_written_alike(text.replace("_", " "))
    words = _in_either_order(_have_got([_token(w) for w in _WORD.findall(text)]))
    tokens = _month_first(tuple(w for w in words if w and w not in FILLER))
    for opening in _REMINDERS:  # "remember to", "don't forget to", after "user note"
        if tokens[: len(opening)] == opening and len(tokens) > len(opening):
            return tokens[len(opening) :]
    return tokens


def _have_got(words: list[str]) -> list[str]:
    """ "I've got two cats" says "I have two cats": a "got" right after "have" is dropped."""
    return [w for at, w in enumerate(words) if not (w == "got" and at and words[at - 1] == "have")]


def _in_either_order(words: list[str]) -> list[str]:
    """Two words joined by "and" in one order ("Fridays and Mondays" as "Mondays and
    Fridays"): a list of two says the same either way round. Longer runs keep their order."""
    found = list(words)
    for at in range(1, len(found) - 1):
        if found[at] == "and" and found[at - 1] not in FILLER and found[at + 1] not in FILLER:
            found[at - 1], found[at + 1] = sorted((found[at - 1], found[at + 1]))
    return found


def _month_first(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """A day before its month ("30 April") in the month's order ("April 30"), so a date is
    one date however it is written."""
    found = list(tokens)
    for at in range(len(found) - 1):
        day, month = found[at], found[at + 1]
        if day.isdigit() and len(day) <= 2 and month in _MONTHS:
            found[at], found[at + 1] = month, day
    return tuple(found)


def same_fact(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` say the same thing (see the module docstring): the same content
    tokens in the same order, so "Bob owes Alice 5 euros" is not "Alice owes Bob 5 euros" nor
    "I owe the dentist" "the dentist owes me"; only a block saying when may move from the end to
    the start. Two texts with no content tokens are never the same (nothing to compare)."""
    left, right = content_tokens(a), content_tokens(b)
    same = bool(left) and (left == right or _time_moved(left, right))
    return same and not _plural_name_clash(a, b)


def _names(text: str) -> set[str]:
    """The capitalised words after the first (a text in capitals has none to tell)."""
    words = _WORD.findall(text)[1:]
    return {fold(w).strip(_EDGE) for w in words if w[:1].isupper() and not w.isupper()}


def _plural_name_clash(a: str, b: str) -> bool:
    """Whether a name ends in an ``s`` in one text and without it in the other: the plural
    ``s`` is folded for words ("cats"), but "Dr. Adams" is not "Dr. Adam" ("Sundays" is
    Sunday)."""
    left, right = _names(a), _names(b)
    return any(
        name[:-1] in other and name not in other and name[:-1] not in _DAYS
        for names, other in ((left, right), (right, left))
        for name in names
        if name.endswith("s")
    )


_GERMAN = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue"})
"""The German way of writing an umlaut without it ("Jürgen", "Juergen")."""
_DATE_FILLER = frozenset(("the", "of", "on"))


def same_value(a: str, b: str) -> bool:
    """Whether two values of one slot are one value: the same words once case, accents (or an
    umlaut written "ue"), hyphens, a final full stop, British or American spelling and a date's
    order and ordinal are set aside ("Jean-Pierre" and "Jean Pierre", "Dr. Schröder" and "dr
    schroeder", "grey" and "gray", "the 9th of July" and "July 9"). Names keep a final ``s``:
    "Dr. Adams" is not "Dr. Adam"."""
    return bool(_value_keys(a) & _value_keys(b))


def _value_keys(value: str) -> set[tuple[str, ...]]:
    return {_value_key(value), _value_key(value.translate(_GERMAN))}


def _value_key(value: str) -> tuple[str, ...]:
    words = [fold(w).strip(_EDGE) for w in _WORD.findall(value.replace("-", " "))]
    words = [ordinal[1] if (ordinal := _ORDINAL.fullmatch(w)) else w for w in words if w]
    words = [_spelling(SYNONYMS.get(w, w)) for w in words]
    if any(w in _MONTHS for w in words):
        words = [w for w in words if w not in _DATE_FILLER]
    return _month_first(tuple(words))


def opposite_fact(a: str, b: str) -> bool:
    """Whether ``b`` says ``a``'s opposite: the same content tokens, in order, once the
    negations are set aside ("not", "never", "no", "cannot", "won't"), and one of the two
    negated where the other is not ("I'm allergic to cats", "I'm not allergic to cats"). Both
    stay, linked by ``contradicts``: neither repeats nor replaces the other."""
    left, right = _affirmed(content_tokens(a)), _affirmed(content_tokens(b))
    return bool(left[0]) and left[0] == right[0] and left[1] != right[1]


_NEGATING = frozenset(("not", "never", "no"))
_NEGATED_STEMS = {"cannot": "can", "won't": "will", "ca": "can", "wo": "will", "sha": "shall"}


def _affirmed(tokens: tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
    """The tokens without their negations, and whether they said no (an odd count)."""
    kept: list[str] = []
    negations = 0
    for token in tokens:
        stem = token[:-3] if token.endswith("n't") else token
        if token in _NEGATING or stem != token or token in _NEGATED_STEMS:
            negations += 1
            stem = _NEGATED_STEMS.get(token, _NEGATED_STEMS.get(stem, stem))
            if stem not in _NEGATING and stem not in FILLER:
                kept.append(stem)
        else:
            kept.append(token)
    return tuple(kept), negations % 2 == 1


def _time_moved(left: tuple[str, ...], right: tuple[str, ...]) -> bool:
    """Whether ``right`` is ``left`` with a block of time words moved from one end to the
    other ("I drink coffee every morning", "every morning I drink coffee")."""
    if len(left) != len(right):
        return False
    for cut in range(1, len(left)):
        head, tail = left[:cut], left[cut:]
        if tail + head == right and (_says_when(head) or _says_when(tail)):
            return True
    return False


def _says_when(block: tuple[str, ...]) -> bool:
    return block[0] in _TIME_WORDS and all(
        w in _TIME_WORDS or any(c.isdigit() for c in w) for w in block
    )


_NEGATIONS = frozenset("not no never nor cannot can't don't doesn't isn't won't without".split())


def hard_tokens(text: str) -> frozenset[str]:
    """What no rephrasing changes: numbers with the unit after each ("5 mg"), negations, and
    names (capitalised words but the first). Two texts that differ here are two facts, whoever
    says otherwise (an LLM classifier's "duplicate" included: node/absorb/pipeline.py)."""
    words = _WORD.findall(_numbers_written_alike(text.replace("_", " ")))
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
