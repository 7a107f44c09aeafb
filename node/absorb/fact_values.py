"""Whether what follows "my doctor is" is a new doctor or something said about the doctor.

A single-valued slot (node/absorb/fact_rules.py) is *replaced* by a new value: "my doctor is Dr.
Lee" archives Dr. Chen. But most of what people say after "my doctor is" is not a new doctor: "my
doctor is on holiday", "my wife is pregnant", "my phone is broken", "my birthday is tomorrow". Read
as values, each would archive the real one. So a value must look like what its slot holds, and what
does not is a *state* of the slot: ``doctor_state / on holiday``, a new fact related to the doctor,
archiving nothing. A negation ("my doctor is not Dr. Lee", "is no longer ...") is ``not_doctor / Dr.
Lee``: the opposite of ``doctor / Dr. Lee`` (a contradiction if that is stored), never a value "not
Dr. Lee". "my sister is called Ines" is ``sister_name / Ines``, and a value loses a trailing "now"
or "since last year" ("I live in Lisbon now").

What each slot holds: a person slot (doctor, wife, manager, ...) a name (a title, a
capitalised word that is not a state, a nationality or a faith: "my doctor is Brazilian" is
``doctor_state / Brazilian``); a place slot (lives_in,
born_in) a place (not "a flat", not "fear"); a date slot a date (a digit or a month); age a
number; phone digits; email an ``@``; a workplace not "home" or "night". When unsure the
value is a state: a state that was a value leaves two live facts, linked, where a value that
was a state would have archived a fact.

Pure and deterministic.
"""

from __future__ import annotations

import re

from .demonyms import is_demonym
from .fact_rules import is_single_valued, slot

__all__ = ["PEOPLE", "about_slot", "refine", "state_predicate", "trim_place"]

Triple = tuple[str, str, str]

PEOPLE = frozenset(
    """doctor dentist therapist vet partner wife husband spouse manager boss name son daughter
    mother mum mom father dad brother sister grandma grandmother grandpa grandfather aunt
    uncle cousin niece nephew friend neighbour neighbor colleague boyfriend girlfriend
    fiance fiancee landlord lawyer gp physio accountant""".split()
)
"""Attributes whose value is a person: a name, else a state of that person."""
_PLACES = frozenset("lives_in born_in home hometown".split())
_DATES = frozenset("birthday born_on anniversary".split())
_WORKPLACES = frozenset("works_at works_for employer job school".split())
_TITLES = frozenset("dr mr mrs ms mx prof sir dame".split())
_MONTHS = frozenset(
    """jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june
    july august september october november december""".split()
)
_NUMBER_WORDS = frozenset(
    """one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy
    eighty ninety hundred""".split()
)
_OPENERS = frozenset(
    """a an the my his her our their your very so really quite too always never sometimes
    usually often away off out back home here there on in at with from for about like just
    also getting going being having feeling looking""".split()
)
"""First words that open a description, never a name or a value."""
_STATES = frozenset(
    """pregnant sick ill unwell busy retired late early fine well ok okay great good bad nice
    kind lovely strict angry upset happy sad tired dead gone leaving moving new old young
    expecting closed open available unavailable free booked abroad overseas fired hired
    married divorced single engaged injured hurt better worse recovering pleased annoyed rude
    funny clever smart wonderful terrible awful amazing excellent brilliant right wrong sure
    afraid allergic vegan vegetarian tall short broken lost stolen dead empty full cracked
    working fixed missing expired blocked changing tomorrow today tonight soon yesterday
    next coming fear hope denial peace comfort luxury poverty harmony limbo chaos debt""".split()
)
_WORKPLACE_STATES = frozenset(
    "home night nights weekends weekend remotely part-time full-time myself".split()
)
_TAIL = re.compile(
    r"\s+(?:now|nowadays|these\s+days|at\s+the\s+moment|currently|for\s+now|since\b.*|"
    r"for\b.*|because\b.*|last\b.*|this\b.*|recently|with\b.*|after\b.*|when\b.*|as\b.*|"
    r"in\s+\d{4}.*|a\s+(?:few|couple)\b.*|\d+\s+\w+\s+ago|"
    r"in\s+(?:the\s+)?(?:spring|summer|autumn|fall|winter|january|february|march|april|may|"
    r"june|july|august|september|october|november|december)\b.*|yesterday|today|earlier\b.*)$",
    re.I,
)
_LEAD = re.compile(r"(?:now|currently|still)\s+", re.I)
_RELATIVE = re.compile(r"\s*,.*|\s+(?:who|whom|whose|which)\s.*", re.I | re.S)
"""What follows a person's name about them ("Dr. Chen, who is great"): not the name."""
_NOW = re.compile(r"\s+(?:now|nowadays|these\s+days|at\s+the\s+moment)$", re.I)
_NAMED = re.compile(r"(?:called|named)\s+", re.I)
_NEGATION = re.compile(r"(?:not|no\s+longer|never)\s+", re.I)
_PREPOSITION = re.compile(r"(?:on|in|at)\s+", re.I)
_WORD = re.compile(r"[\w'’-]+")


def about_slot(predicate: str) -> str | None:
    """The single-valued slot a fact is *about* without filling it: ``doctor`` for
    ``doctor_state`` ("my doctor is on holiday") and ``not_doctor`` ("... is not Dr. Lee")
    Such a fact is related to the slot's value, never replaces it."""
    for stem in (predicate.removesuffix("_state"), predicate.removeprefix("not_")):
        if stem != predicate and is_single_valued(slot(stem)):
            return slot(stem)
    return None


def state_predicate(predicate: str) -> str:
    """The predicate of a state of ``predicate``'s slot: ``doctor_state``."""
    return f"{slot(predicate)}_state"


def trim_place(value: str) -> str:
    """A value without a trailing "now", "since 2020", "for work": "Lisbon now" is Lisbon."""
    trimmed = _TAIL.sub("", value).strip()
    return trimmed or value


def refine(subject: str, predicate: str, raw: str) -> Triple | None:
    """The triple for "SUBJECT's PREDICATE is RAW" (the module docstring's rules), or
    ``None`` when nothing is left of the value."""
    value = _LEAD.sub("", raw, count=1) if _LEAD.match(raw) else raw
    value = _NOW.sub("", value) or value  # "my manager is Tom now"
    if (named := _NAMED.match(value)) is not None:
        stem = predicate.removesuffix("_name")
        return _checked(subject, f"{stem}_name", value[named.end() :])
    if (negation := _NEGATION.match(value)) is not None:
        rest = trim_place(value[negation.end() :])
        return (subject, f"not_{slot(predicate)}", rest) if rest else None
    if predicate == "home":
        predicate = "lives_in"
    return _checked(subject, predicate, value)


def _checked(subject: str, predicate: str, value: str) -> Triple | None:
    """The value kept as the slot's, or made a state of it, by what the slot holds."""
    kind = _kind(predicate)
    preposition = _PREPOSITION.match(value)
    if preposition is not None and kind != "person":
        value = value[preposition.end() :]  # "is on May 4", "is in Lisbon"
    if kind in ("place", "work"):
        value = trim_place(value)
    if kind == "person":
        value = _RELATIVE.sub("", value)
    if not value:
        return None
    if kind is None or _holds(kind, value):
        return (subject, predicate, value)
    return (subject, state_predicate(predicate), value)


def _kind(predicate: str) -> str | None:
    name = slot(predicate)
    stem = predicate.removesuffix("_name")
    if stem in PEOPLE or name in PEOPLE:
        return "person"
    if name in _PLACES:
        return "place"
    if name in _DATES:
        return "date"
    if name in _WORKPLACES:
        return "work"
    if name in ("age", "phone", "email"):
        return name
    return "other" if is_single_valued(name) else None


def _holds(kind: str, value: str) -> bool:
    words = [w.casefold() for w in _WORD.findall(value)]
    if not words:
        return False
    first = words[0].rstrip(".")
    if kind == "person":
        return _is_name(value, first, words)
    if value[0].isupper() and first not in _OPENERS - {"the"}:
        return kind not in ("date", "age", "phone", "email") or _holds(kind, value.casefold())
    if first in _OPENERS - {"the", "a", "an", "home"} or first in _STATES:
        return False
    checks = {
        "place": lambda: first not in ("a", "an"),
        "date": lambda: any(c.isdigit() for c in value) or bool(set(words) & _MONTHS),
        "age": lambda: any(c.isdigit() for c in value) or first in _NUMBER_WORDS,
        "phone": lambda: sum(c.isdigit() for c in value) >= 3,
        "email": lambda: "@" in value,
        "work": lambda: (
            first not in _WORKPLACE_STATES
            and not value.casefold().startswith(("the moment", "from "))
        ),
    }
    return checks.get(kind, lambda: not first.endswith("ing"))()


def _is_name(value: str, first: str, words: list[str]) -> bool:
    """A title ("Dr. Lee", "dr lee") or a capitalised word that is not a state: a lower-case
    word may be a name ("maria") but as often is not ("rubbish", "hard to spell"), and a
    name read as a state archives nothing."""
    if first in _TITLES:
        return True
    if first in _OPENERS or first in _STATES or is_demonym(first):
        return False  # "my doctor is Brazilian" describes the doctor (node/absorb/demonyms.py)
    return value[0].isupper()
