"""The keys an ``import`` line may hold, checked so none is silently dropped (issue 15, item 6)."""

from __future__ import annotations

from feral.sync.errors import InvalidInput

__all__ = ["IMPORT_SHAPES", "check_import_keys"]

IMPORT_SHAPES = (frozenset({"subject", "predicate", "object"}), frozenset({"fact"}))
"""A JSON import line is a triple or a fact, nothing else."""


def check_import_keys(item: object, number: int) -> None:
    """Refuse an import line's JSON unless it is an object with a triple's keys or ``fact``.

    Raises:
        InvalidInput: ``line N: ...`` naming the key it does not take.
    """
    if not isinstance(item, dict):
        raise InvalidInput(f"line {number}: expected a JSON object")
    triple, fact = IMPORT_SHAPES
    keys = set(item)
    unknown = sorted(keys - triple - fact)
    if unknown:
        raise InvalidInput(
            f"line {number}: unknown key {unknown[0]!r}; a line holds subject, predicate and "
            f"object, or fact"
        )
    if keys & triple and keys & fact:
        raise InvalidInput(f"line {number}: give subject/predicate/object or fact, not both")
