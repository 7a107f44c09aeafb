"""Which predicates hold one value per subject: the slot rule, shared by the absorb pipeline
(node/absorb/fact_rules.py re-exports it) and the conflicts a slot holding several values makes
(storage/absorb/slot_conflicts.py).

Single-valued predicates (:data:`SINGLE_VALUED`) hold one current value per subject: a new
object for one of them *supersedes* the stored one instead of sitting beside it. They are the
facts of a person's identity and situation that change by replacement, and every
``favourite_*`` (one favourite colour at a time). A predicate ending in ``_name``
(``doctor_name``, from "my doctor's name is ...") is the same slot as its stem when the stem is
single-valued (:func:`slot`). Everything else (``likes``, ``is``, ``note``, ``kids``, ...)
holds many values.

Pure and deterministic, so every device applies the same rule to the same rows.
"""

from __future__ import annotations

__all__ = ["FAVOURITE_PREFIX", "SINGLE_VALUED", "is_single_valued", "slot"]

SINGLE_VALUED = frozenset(
    """name age birthday born_on born_in lives_in works_at works_for job employer doctor gp
    dentist therapist physio vet accountant landlord partner wife husband spouse manager
    school email phone address nationality pronouns timezone""".split()
)
FAVOURITE_PREFIX = "favourite_"


def slot(predicate: str) -> str:
    """The value slot a predicate fills: ``doctor_name`` fills ``doctor``."""
    stem = predicate.removesuffix("_name")
    return stem if stem != predicate and is_single_valued(stem) else predicate


def is_single_valued(predicate: str) -> bool:
    """Whether a subject holds one current value of ``predicate`` (see the module docstring)."""
    return predicate in SINGLE_VALUED or predicate.startswith(FAVOURITE_PREFIX)
