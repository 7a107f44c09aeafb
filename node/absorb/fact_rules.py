"""What the absorb pipeline knows about predicates: which hold one value, which are opposites,
and which category a fact falls in.

Pure and deterministic, so every device classifies the same text the same way.

Single-valued predicates (:data:`SINGLE_VALUED`) hold one current value per subject: a new
object for one of them *supersedes* the stored one instead of sitting beside it. They are the
facts of a person's identity and situation that change by replacement::

    name age birthday born_on born_in lives_in works_at works_for job employer
    doctor dentist therapist vet partner wife husband spouse manager school
    email phone address nationality pronouns timezone

and every ``favourite_*`` (one favourite colour at a time). A predicate ending in ``_name``
(``doctor_name``, from "my doctor's name is ...") is the same slot as its stem when the stem is
single-valued (:func:`slot`), so "my doctor's name is Dr. Chen" and "my doctor is now Dr. Lee" are
one slot. Everything else (``likes``, ``is``, ``note``, ``kids``, ...) holds many values. That rule
lives in storage/memory/slot_rules.py (slot conflicts read it too) and is re-exported here.

Opposites (:func:`opposite`): ``likes``/``dislikes``, ``is``/``is_not``, and ``P``/``not_P``.
The same subject and object under opposite predicates is a contradiction.
"""

from __future__ import annotations

from feral.storage.memory.slot_rules import SINGLE_VALUED, is_single_valued, slot

__all__ = [
    "CATEGORY_OF",
    "SINGLE_VALUED",
    "category_of",
    "is_single_valued",
    "opposite",
    "slot",
]

_OPPOSITES = {"likes": "dislikes", "dislikes": "likes", "is": "is_not", "is_not": "is"}

CATEGORY_OF = {
    **dict.fromkeys(
        "name age birthday born_on born_in lives_in nationality pronouns is is_not".split(),
        "identity",
    ),
    **dict.fromkeys("likes dislikes prefers".split(), "preference"),
    **dict.fromkeys("interested_in hobby hobbies enjoys plays reads".split(), "interest"),
    **dict.fromkeys("goal goals plan plans wants_to plans_to dream".split(), "goal"),
    **dict.fromkeys("appointment meeting trip deadline event".split(), "event"),
    **dict.fromkeys("directive rule instruction".split(), "directive"),
    "note": "note",
}
"""The category of a predicate; a fact whose predicate is not here is ``context`` (where the
user works, who their doctor is: their situation)."""

_DIRECTIVE_OPENINGS = ("always ", "never ", "please ", "don't ever ", "do not ever ")


def opposite(predicate: str) -> str:
    """The predicate that says the opposite: ``likes`` for ``dislikes``, ``P`` for ``not_P``."""
    if predicate in _OPPOSITES:
        return _OPPOSITES[predicate]
    return predicate.removeprefix("not_") if predicate.startswith("not_") else f"not_{predicate}"


def category_of(predicate: str, obj: str) -> str:
    """A fact's category (storage/memory/memory_model.py's CATEGORIES): identity, preference, ...

    A note that tells the assistant how to behave ("always answer in French") is a
    ``directive``; other notes stay ``note``.
    """
    name = slot(predicate)
    if name == "note":
        lowered = obj.casefold()
        return "directive" if lowered.startswith(_DIRECTIVE_OPENINGS) else "note"
    if name.startswith("favourite_"):
        return "preference"
    if is_single_valued(name) and name not in CATEGORY_OF:
        return "identity" if name in ("email", "phone", "address", "timezone") else "context"
    return CATEGORY_OF.get(name, "context")
