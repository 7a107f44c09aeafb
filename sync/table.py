"""One replicated table: its wire code, columns in wire order, and the checks a row passes
(sync/schema.py's :class:`~feral.sync.schema.Schema` is a set of these)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from . import unknown
from .column import MAX_INT, MIN_INT, Column, Kind, Value
from .errors import SchemaError

__all__ = ["Table"]

_INF = math.inf


@dataclass(frozen=True)
class Table:
    """One replicated table.

    Attributes:
        name: the SQL table name.
        code: the small integer that names the table on the wire.
        columns: replicated columns in wire order; the first is always ``id``.
        fts: the text columns indexed by the table's FTS5 index (built locally).
    """

    name: str
    code: int
    columns: tuple[Column, ...]
    fts: tuple[str, ...]

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def has_archive(self) -> bool:
        return "archived" in self.column_names

    @property
    def base_count(self) -> int:
        """How many columns every row of this table has, whatever schema version wrote it."""
        return sum(1 for c in self.columns if c.added_in is None)

    def check_values(self, values: tuple[object, ...]) -> None:
        """Validate a full row of values in column order.

        A row may end early, leaving out columns a later schema version added (a node of an
        older version wrote it), or run on with values of columns this node does not know (a
        newer one did): those are kept opaque and only checked to be plain values
        (sync/unknown.py).

        The common cases (ASCII text, plain integers, finite floats, bools, allowed nulls) are
        accepted inline; anything else goes through :meth:`Column.check`, which decides exactly
        and names the problem. This runs for every delta received, so the fast path is worth
        its few lines; it only ever accepts, and tests/sync/test_fast_paths.py holds it to
        :meth:`Column.check`'s verdict and message for values of every type.
        """
        if len(values) != len(self.columns):
            unknown.check_length(self, values)
        for column, value in zip(self.columns, values, strict=False):
            kind, kind_of = column.kind, type(value)
            if kind == "text" and kind_of is str:
                text: str = value  # type: ignore[assignment]
                if text.isascii() and len(text) <= column.max_bytes and "\x00" not in text:
                    continue
            elif (
                (kind == "int" and kind_of is int and MIN_INT <= value <= MAX_INT)  # type: ignore[operator]
                or (kind == "real" and kind_of is float and -_INF < value < _INF)  # type: ignore[operator]
                or (kind == "bool" and kind_of is bool)
                or (value is None and column.nullable)
            ):
                continue
            column.check(value)

    def accepts_all(self, rows: Sequence[Sequence[object]]) -> bool:
        """Whether :meth:`check_values` accepts every row: the same verdict, for a batch.

        A batch of local writes is tested a column at a time (see :meth:`Column.accepts_all`),
        which costs a fraction of checking each row; on ``False`` the caller checks row by row,
        which finds and names the first problem exactly as it always has.
        """
        if not rows:
            return True
        if set(map(len, rows)) != {len(self.columns)}:  # rows of other schema versions
            return all(map(self._row_passes, rows))
        return all(
            column.accepts_all(values)
            for column, values in zip(self.columns, zip(*rows, strict=True), strict=True)
        )

    def _row_passes(self, row: Sequence[object]) -> bool:
        try:
            self.check_values(tuple(row))
        except SchemaError:
            return False
        return True

    def tombstone_values(self, row_id: str) -> tuple[Value, ...]:
        """The row a hard delete leaves behind: the id, every other column emptied."""
        empty: dict[Kind, Value] = {"text": "", "int": 0, "real": 0.0, "bool": False}
        return (row_id,) + tuple(None if c.nullable else empty[c.kind] for c in self.columns[1:])
