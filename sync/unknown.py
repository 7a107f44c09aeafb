"""Rows written by a node of another schema version: columns left out, and columns unknown here.

Schema changes are additive (docs/PROTOCOL.md §10): a new schema version may append nullable
columns to a replicated table. So a row on the wire may

- end early: a node of an older version wrote it, without the columns added since; each left
  out value is null here;
- run on: a node of a newer version wrote it, with values of columns this node does not know.
  They are **opaque**: checked only to be plain values (text, integer, finite real, bool or
  nil, within the bounds any column has), stored beside the row, merged with it, relayed
  unchanged (the log keeps the entry's bytes as they came) and carried into this node's own
  later writes of the row, so a node one version behind loses nothing of the newer columns.

Two nodes of different versions holding the same row must agree on it (the row digest of
§7, the exports' merge), so a row is compared in its **wire form**: the values this node knows,
then the opaque ones, with trailing nulls beyond the table's first columns dropped
(:func:`wire_form`): a null in a column a node does not know and a column left out are the
same thing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

from .errors import SchemaError

if TYPE_CHECKING:
    from .column import Value
    from .table import Table

__all__ = ["MAX_UNKNOWN_COLUMNS", "check_length", "split", "wire_form"]

T = TypeVar("T")

MAX_UNKNOWN_COLUMNS = 16
"""Most values of unknown columns one row may carry (a newer schema adds a few at a time)."""
_MAX_TEXT_BYTES = 65_536
_MIN_INT, _MAX_INT = -(1 << 63), (1 << 63) - 1


def check_length(table: Table, values: Sequence[object]) -> None:
    """Refuse a row shorter than the table's first columns or with unknown values that are not
    plain; a row may leave out only the columns that a later schema version added."""
    known = len(table.columns)
    if len(values) < table.base_count or len(values) > known + MAX_UNKNOWN_COLUMNS:
        raise SchemaError(f"table {table.name!r} has {known} columns, a delta gave {len(values)}")
    for value in values[known:]:
        _check_plain(table.name, value)


def _check_plain(table: str, value: object) -> None:
    ok = (
        value is None
        or type(value) is bool
        or (type(value) is int and _MIN_INT <= value <= _MAX_INT)
        or (type(value) is float and math.isfinite(value))
        or (type(value) is str and _plain_text(value))
    )
    if not ok:
        raise SchemaError(f"table {table!r}: a value of an unknown column is not a plain value")


def _plain_text(text: str) -> bool:
    try:
        return len(text.encode("utf-8")) <= _MAX_TEXT_BYTES and "\x00" not in text
    except UnicodeEncodeError:
        return False


def split(table: Table, values: Sequence[Value]) -> tuple[list[Value], list[Value]]:
    """The values of the columns this node knows (left-out ones as null), and the rest."""
    known = len(table.columns)
    head = list(values[:known])
    head.extend([None] * (known - len(head)))
    return head, list(values[known:])


def wire_form(table: Table, known: Sequence[T], opaque: Sequence[T]) -> list[T]:
    """A row as every schema version sees it: known values, then opaque ones, without the
    trailing nulls beyond the table's first columns."""
    row = [*known, *opaque]
    base = table.base_count
    while len(row) > base and row[-1] is None:
        row.pop()
    return row
