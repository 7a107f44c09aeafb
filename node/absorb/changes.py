"""Changes said without "my X is Y": a new value of a slot in the words people use for a change.

"I changed my dentist to Dr. Ruiz", "We switched to Dr. Blanco as our vet", "My manager changed
to Bea", "I now call Ghent home", "I sold up and moved to Málaga", "I quit Infineon and joined
Bosch", "I changed jobs and now work at Mollie", "We live in Köln now". Read as notes, none of
them replaced the value they change, and the old one stayed live (and in the prompt). Each is
read here as the slot it fills, and the value goes through node/absorb/fact_values.py as a
possessive's does, so "I changed my doctor to the afternoon" is a state, never a new doctor. A
slot must be one that holds a person or a single value: "I switched the heating to eco mode" and
"I changed my doctor's appointment to Friday" stay notes.

Also here, the ends of a fact, each the opposite of the fact (a contradiction of it, both kept):
a liking that ended ("I no longer like olives", "I never liked karaoke") is a ``dislikes``; "I no
longer work at Aldi", "my sister no longer lives in Oslo" are ``not_works_at`` and
``not_sister_lives_in``; "Dr. Ortega is not my dentist anymore" is ``not_dentist / Dr. Ortega``.

Pure and deterministic.
"""

from __future__ import annotations

import re

from .fact_rules import is_single_valued, slot
from .fact_values import PEOPLE, refine

__all__ = ["parse_change"]

Triple = tuple[str, str, str]

USER = "user"
_WE = r"(?i:i|we)(?:\s+(?i:have)|['’]ve)?\s+"
_SLOT = r"(?P<attr>[^\W\d_]+)"
_SLOT_CHANGES = (
    re.compile(
        rf"{_WE}(?i:changed|switched)\s+(?:(?i:my|our)\s+)?{_SLOT}\s+(?i:to)\s+(?P<value>.+)"
    ),
    re.compile(
        rf"{_WE}(?i:changed|switched|moved)\s+(?i:to)\s+(?P<value>.+?)\s+(?i:as)\s+"
        rf"(?i:my|our)\s+{_SLOT}"
    ),
    re.compile(rf"(?i:my|our)\s+{_SLOT}\s+(?:(?i:has)\s+)?(?i:changed)\s+(?i:to)\s+(?P<value>.+)"),
)
"""A slot named and its new value: "I changed my dentist to ...", "We switched to ... as our
vet", "My manager changed to ..."."""
_WHOLE_CHANGES = (
    (re.compile(rf"{_WE}(?:(?i:now)\s+)?(?i:call)\s+(?P<value>[A-Z].*?)\s+(?i:home)"), "lives_in"),
    (
        re.compile(
            rf"{_WE}(?:[^\W\d_]+\s+(?i:up|out|everything|sticks)|(?i:quit|retired))\s+(?i:and)"
            r"\s+(?i:moved|relocated)\s+(?i:to)\s+(?P<value>.+)"
        ),
        "lives_in",
    ),
    (
        re.compile(
            r"(?i:we)\s+(?:(?i:now|still|currently)\s+)?(?i:live)\s+(?i:in)\s+(?P<value>.+)"
        ),
        "lives_in",
    ),
    (
        re.compile(
            rf"{_WE}(?i:left|quit)\s+\S.*?\s+(?i:and)\s+(?:(?i:have)\s+)?(?i:joined|started\s+at)"
            r"\s+(?P<value>.+)"
        ),
        "works_at",
    ),
    (
        re.compile(
            rf"{_WE}(?i:changed|switched)\s+(?i:jobs?)\s+(?i:and)\s+(?:(?i:now)\s+)?"
            r"(?i:work)\s+(?i:at|for)\s+(?P<value>.+)"
        ),
        "works_at",
    ),
    (
        re.compile(
            r"(?i:i)\s+(?i:no\s+longer|never)\s+(?i:like|liked|love|loved|enjoy|enjoyed)\s+"
            r"(?P<value>.+)"
        ),
        "dislikes",
    ),
)
"""A change that names its slot by its verb: where the user lives, works, what they like."""
_TRAILING = ".!?,;: \t\r\n"
_NO_LONGER = re.compile(
    r"(?:(?i:i)|(?i:my)\s+(?P<who>[^\W\d_]+))\s+(?i:no\s+longer|do\s+not|don['’]t|does\s+not|"
    r"doesn['’]t)\s+(?P<verb>(?i:lives?|works?))\s+(?i:in|at)\s+(?P<value>.+)"
)
_NOT_MY = re.compile(
    r"(?P<value>(?:(?:Dr|Mr|Mrs|Ms|Prof)\.\s+)?[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*){0,2})\s+"
    r"(?:(?i:is\s+not|isn['’]t|is\s+no\s+longer))\s+(?i:my)\s+(?P<attr>[^\W\d_]+)"
    r"(?:\s+(?i:anymore|any\s+more|now))?"
)


def parse_change(text: str) -> Triple | None:
    """The triple a change phrasing says (the module docstring's), else ``None``."""
    return _slot_change(text) or _whole_change(text) or _ended(text)


def _ended(text: str) -> Triple | None:
    """A fact said to have ended: "my sister no longer lives in Oslo", "Dr. Ortega is not my
    dentist anymore"."""
    if (match := _NO_LONGER.fullmatch(text)) is not None:
        who = match["who"].casefold() if match["who"] else None
        if who is not None and who not in PEOPLE:
            return None
        verb = "lives_in" if match["verb"].casefold().startswith("live") else "works_at"
        value = " ".join(match["value"].split()).rstrip(_TRAILING)
        predicate = f"not_{who}_{verb}" if who else f"not_{verb}"
        return (USER, predicate, value) if value else None
    if (match := _NOT_MY.fullmatch(text.rstrip(_TRAILING))) is not None:
        name = match["attr"].casefold()
        return (USER, f"not_{name}", match["value"]) if name in PEOPLE else None
    return None


def _slot_change(text: str) -> Triple | None:
    for pattern in _SLOT_CHANGES:
        match = pattern.fullmatch(text)
        if match is not None:
            name = match["attr"].casefold()
            if name not in PEOPLE and not is_single_valued(slot(name)):
                return None
            value = " ".join(match["value"].split()).rstrip(_TRAILING)
            return refine(USER, name, value) if value else None
    return None


def _whole_change(text: str) -> Triple | None:
    for pattern, predicate in _WHOLE_CHANGES:
        match = pattern.fullmatch(text)
        if match is not None and (value := " ".join(match["value"].split()).rstrip(_TRAILING)):
            return (
                refine(USER, predicate, value)
                if is_single_valued(predicate)
                else (
                    USER,
                    predicate,
                    value,
                )
            )
    return None
