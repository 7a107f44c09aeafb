"""Classifying a new fact against what is stored: new, duplicate, supersede, contradict, related.

Pure and deterministic (the candidates come from storage/absorb/absorb_store.py). The rules, in
order:

1. **duplicate**: the same fact (same normalised triple, stored live, or the same value of its
   single-valued slot, whatever its case or accents: "my doctor's name is Dr. Chen" and "MY
   DOCTOR IS DR. CHEN", "Sao Paulo" and "São Paulo", or of a slot saying the same: "I work for
   Acme" repeats "I work at Acme"; "my daughter's name is Ines" repeats "my daughter is
   Ines").
2. **contradict**: the same subject and object are stored under the opposite predicate
   ("likes green tea" and "dislikes green tea"), or, after rule 3's repeat, a stored fact of
   the same kind says the same words with a "not" ("I'm not allergic to cats":
   node/absorb/same_fact.py's ``opposite_fact``): both stay, linked by ``contradicts``.
3. **duplicate** again, for the same words: a stored fact of the same kind (two notes, a note
   and a fact, or facts of one subject and slot) whose content tokens, in order, are the new
   text's (node/absorb/same_fact.py: every number, unit, name, negation and antonym agrees; only
   filler, plurals and a few synonyms may differ). A near-duplicate that is not that (cosine at
   least :data:`DUPLICATE_COSINE`, content words overlapping at least
   :data:`DUPLICATE_OVERLAP`, the same *marks* and polarity; a row without a vector at the
   stricter :data:`QUEUED_OVERLAP`) is a *look-alike*: "my doctor is Dr. Chen" / "... Dr.
   Lee", "5 mg" / "5 g", left / right. It is written and linked ``related_to`` (rule 5): when
   unsure, keep both.
4. **supersede**: the fact fills a single-valued slot (node/absorb/fact_rules.py) that holds other
   live values for the same subject: each is superseded (archived behind a ``supersedes``
   edge from the new fact). A state or a negation of the slot's value (``doctor_state``,
   ``not_doctor``: node/absorb/fact_values.py) never supersedes: it is related to the value.
5. **related**: the slot's value a state is about, the look-alikes, then stored facts with
   cosine at least :data:`RELATED_COSINE` (at most :data:`MAX_RELATED` in all) get a
   ``related_to`` edge.
6. Otherwise **new**.

How far this is trusted is measured on benchmarks/absorb/ (``python -m benchmarks absorb``:
per class, on a tuning and a held-out half; benchmarks/README.md has the figures).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from feral.storage.absorb.absorb_store import Candidates, Decision
from feral.storage.absorb.word_neighbours import IGNORED_WORDS, WORD_SHARE
from feral.storage.memory.memories import Row
from feral.sync.ids import fact_id, normalise

from .fact_rules import is_single_valued, slot
from .fact_values import about_slot
from .same_fact import opposite_fact, same_fact, same_value

__all__ = [
    "DUPLICATE_COSINE",
    "DUPLICATE_OVERLAP",
    "MAX_RELATED",
    "QUEUED_OVERLAP",
    "RELATED_COSINE",
    "Thresholds",
    "content_words",
    "decide",
    "fact_text",
    "keep_both",
    "marks",
    "negated",
    "same_values",
    "word_overlap",
]

DUPLICATE_COSINE = 0.83
DUPLICATE_OVERLAP = 0.5
QUEUED_OVERLAP = WORD_SHARE
"""A candidate without a vector needs this word overlap; storage/absorb/word_neighbours.py reads
every stored fact that could reach it."""
RELATED_COSINE = 0.6
MAX_RELATED = 3

_WORD = re.compile(r"\w+")
_IGNORED = IGNORED_WORDS
_PEOPLE = frozenset(
    """son sons daughter daughters wife husband partner mum mom mother dad father brother
    sister grandma grandmother grandpa grandfather aunt uncle cousin niece nephew friend boss
    manager colleague neighbour doctor dentist he she""".split()
)
_NEGATIONS = frozenset("not no never dislikes dislike hates hate don doesn isn t".split())
_SAME_VALUES = {"works_at": ("works_for",), "works_for": ("works_at",)}
"""Slots whose equal values say the same thing ("I work at Acme", "I work for Acme"), though a
new value of one never replaces the other's (a place of work is not always the employer)."""


def same_values(name: str) -> tuple[str, ...]:
    """The slots whose equal value repeats ``name``'s (read with it, never superseded by it)."""
    return _SAME_VALUES.get(name, ())


class Thresholds:
    """The cut-offs :func:`decide` uses (the module's constants unless a caller measures)."""

    def __init__(
        self,
        duplicate_cosine: float = DUPLICATE_COSINE,
        duplicate_overlap: float = DUPLICATE_OVERLAP,
        queued_overlap: float = QUEUED_OVERLAP,
        related_cosine: float = RELATED_COSINE,
    ) -> None:
        self.duplicate_cosine = duplicate_cosine
        self.duplicate_overlap = duplicate_overlap
        self.queued_overlap = queued_overlap
        self.related_cosine = related_cosine


def fact_text(subject: str, predicate: str, obj: str) -> str:
    """The text a fact is embedded as (storage/vectors/vectors.py: the parts, ``_`` read as
    spaces)."""
    return " ".join(part.replace("_", " ") for part in (subject, predicate, obj))


def _row_text(row: Row) -> str:
    return fact_text(str(row["subject"]), str(row["predicate"]), str(row["object"]))


def content_words(text: str) -> set[str]:
    """The words that carry meaning: case folded, stop words and filler left out, a trailing
    ``s`` dropped (so "seats" and "seat", "Sundays" and "Sunday" are one word)."""
    return {w.removesuffix("s") for w in _WORD.findall(text.casefold()) if w not in _IGNORED}


def word_overlap(a: str, b: str) -> float:
    """Jaccard overlap of two texts' content words (0 when either has none)."""
    left, right = content_words(a), content_words(b)
    return len(left & right) / len(left | right) if left and right else 0.0


def marks(text: str) -> set[str]:
    """Capitalised words, numbers and words for people (names, dates, amounts, "son" or
    "daughter"): what look-alikes differ in. A trailing ``s`` is dropped ("Sundays")."""
    words = _WORD.findall(text.replace("_", " "))
    found = {
        w.casefold().removesuffix("s")
        for w in words
        if w[0].isupper() or any(c.isdigit() for c in w) or w.casefold() in _PEOPLE
    }
    return found - {"user", "i"}


def _same_marks(a: set[str], b: set[str]) -> bool:
    """The same marks, or one text naming more of the same ("Acme" and "Acme Corp"); but the
    same numbers always: "fact 5 about topic 5" is not "fact 102 about topic 5"."""
    if _numbers(a) != _numbers(b):
        return False
    return a == b or (bool(a) and bool(b) and (a <= b or b <= a))


def _numbers(found: set[str]) -> set[str]:
    return {mark for mark in found if any(c.isdigit() for c in mark)}


def negated(text: str) -> bool:
    """Whether a text says no ("dislikes", "is not", "never"): never a duplicate of a yes."""
    return bool(set(_WORD.findall(text.casefold().replace("_", " "))) & _NEGATIONS)


def _same_kind(triple: tuple[str, str, str], row: Row) -> bool:
    """Two facts that can say the same thing: two notes, a note and a fact, or two facts with
    one subject and one slot ("my wife's dentist" is not "my dentist")."""
    subject, predicate, _ = triple
    if "note" in (predicate, row["predicate"]):
        return True
    same_subject = normalise(subject) == normalise(str(row["subject"]))
    return same_subject and slot(predicate) == slot(str(row["predicate"]))


def _near_duplicate(
    triple: tuple[str, str, str], row: Row, cosine: float | None, limits: Thresholds
) -> bool:
    text, other = fact_text(*triple), _row_text(row)
    if not _same_kind(triple, row) or negated(text) != negated(other):
        return False
    overlap = word_overlap(text, other)
    if overlap < (limits.queued_overlap if cosine is None else limits.duplicate_overlap):
        return False  # the cheap test first: most candidates fail it
    if not _same_marks(marks(text), marks(other)):
        return False
    if is_single_valued(slot(triple[1])) and (
        word_overlap(triple[2], str(row["object"])) < limits.duplicate_overlap
    ):
        return False  # one slot, two values ("green", "blue"): a new value, not a repeat
    if cosine is None:
        return overlap >= limits.queued_overlap
    return cosine >= limits.duplicate_cosine and overlap >= limits.duplicate_overlap


def decide(candidates: Candidates, limits: Thresholds | None = None) -> Decision:
    """The classification of ``candidates.triple`` (the rules are the module docstring's)."""
    limits = limits or Thresholds()
    subject, predicate, obj = candidates.triple
    exact = candidates.exact
    if exact is not None and not exact["archived"] and not exact["deleted"]:
        return Decision("duplicate", duplicate_of=str(exact["id"]))
    name = slot(predicate)
    own_slot = [r for r in candidates.slot if slot(str(r["predicate"])) == name]
    alike = (name, *same_values(name))
    for row in candidates.slot:  # "my doctor's name is Dr. Chen", then "my doctor is Dr. Chen"
        if slot(str(row["predicate"])) not in alike:
            continue
        if _same_value(str(row["object"]), obj):
            return Decision("duplicate", duplicate_of=str(row["id"]))
    if (repeated := _state_repeating_value(candidates)) is not None:
        return Decision("duplicate", duplicate_of=repeated)
    if candidates.opposite is not None:
        return Decision("contradict", contradicts=(str(candidates.opposite["id"]),))
    ordered = _by_closeness(candidates.neighbours)
    text = fact_text(*candidates.triple)
    for row, _ in ordered:  # the same words again (node/absorb/same_fact.py): nothing to write
        if _same_kind(candidates.triple, row) and same_fact(text, _row_text(row)):
            return Decision("duplicate", duplicate_of=str(row["id"]))
        if _named_again(candidates.triple, row):
            return Decision("duplicate", duplicate_of=str(row["id"]))
    for row, _ in ordered:  # "I'm not allergic to cats": the stored note's opposite
        if _same_kind(candidates.triple, row) and opposite_fact(_row_text(row), text):
            return Decision("contradict", contradicts=(str(row["id"]),))
    lookalikes = [  # close but not the same: keep both, linked
        str(row["id"])
        for row, cosine in ordered
        if _near_duplicate(candidates.triple, row, cosine, limits)
    ]
    if is_single_valued(name) and own_slot:
        return Decision("supersede", supersedes=tuple(sorted(str(r["id"]) for r in own_slot)))
    own = fact_id(subject, predicate, obj)
    about = [str(r["id"]) for r in candidates.slot if r not in own_slot]  # a state, a "not"
    close = [
        str(row["id"])
        for row, cosine in ordered
        if cosine is not None and cosine >= limits.related_cosine and row["id"] != own
    ]
    related = tuple(dict.fromkeys([*about, *lookalikes, *close]))[:MAX_RELATED]
    if related:
        return Decision("related", related=related)
    return Decision("new")


def _state_repeating_value(candidates: Candidates) -> str | None:
    """The stored value a "state" only repeats in lower case ("my manager is tomasz" after
    "My manager is Tomasz", "i live in new york"): the row it repeats, else ``None``."""
    _, predicate, obj = candidates.triple
    name = about_slot(predicate) if predicate.endswith("_state") else None
    for row in candidates.slot if name else ():
        if slot(str(row["predicate"])) == name and _same_value(str(row["object"]), obj):
            return str(row["id"])
    return None


def _named_again(triple: tuple[str, str, str], row: Row) -> bool:
    """ "My daughter's name is Inès" after "My daughter is Ines": one person named twice, a
    ``_name`` predicate and its stem with one subject and one value."""
    subject, predicate, obj = triple
    stored = str(row["predicate"])
    return (
        predicate != stored
        and predicate.removesuffix("_name") == stored.removesuffix("_name")
        and normalise(subject) == normalise(str(row["subject"]))
        and _same_value(str(row["object"]), obj)
    )


def _same_value(stored: str, said: str) -> bool:
    """One value said again, whatever its case, spacing, accents, hyphens, spelling or final
    full stop ("DR. ABIOLA" is Dr. Abiola, "Sao Paulo" São Paulo, "gray" grey, "March 3rd" 3
    March: node/absorb/same_fact.py's ``same_value``)."""
    return same_value(stored, said)


def keep_both(decision: Decision, triple: tuple[str, str, str]) -> Decision:
    """``remember --keep-both``: what would be merged or superseded is written beside the
    stored row instead, linked to it by ``related_to`` (an exact repeat of ``triple``, the
    same id, is still one row)."""
    if decision.classification == "supersede":
        return Decision("related", related=decision.supersedes)
    merged = decision.duplicate_of
    if decision.classification == "duplicate" and merged not in (None, fact_id(*triple)):
        return Decision("related", related=(str(merged),))
    return decision


def _by_closeness(neighbours: Sequence[tuple[Row, float | None]]) -> list[tuple[Row, float | None]]:
    """Nearest first; rows without a vector after, by id (the same order on every device)."""
    return sorted(neighbours, key=lambda n: (n[1] is None, -(n[1] or 0.0), str(n[0]["id"])))
