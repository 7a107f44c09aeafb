"""The replicated schema: which tables travel between nodes, their columns and value types.

This registry is the single source for storage's DDL and for validating every delta that arrives
from a peer: a delta can only name a table and columns listed here, so it can never name SQL
(DESIGN §5). Derived data (FTS, vectors, wiki pages) is not listed: it never travels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from .errors import SchemaError

__all__ = [
    "EPISODES",
    "EXEC_LOG",
    "FACTS",
    "SCHEMA_VERSION",
    "TABLES",
    "Column",
    "Table",
    "Value",
    "table_by_code",
    "table_by_name",
]

Value = str | int | float | bool | None
"""A value a replicated column can hold."""

Kind = Literal["text", "int", "real", "bool"]

SCHEMA_VERSION = 1
MAX_TEXT_BYTES = 65_536
MIN_INT = -(1 << 63)
MAX_INT = (1 << 63) - 1


@dataclass(frozen=True)
class Column:
    """One replicated column.

    Attributes:
        name: the SQL column name (checked against this registry, then quoted).
        kind: the value type; ``bool`` is stored as an INTEGER 0/1.
        nullable: whether ``None`` is allowed.
        max_bytes: cap on a text value's UTF-8 length.
    """

    name: str
    kind: Kind
    nullable: bool = False
    max_bytes: int = MAX_TEXT_BYTES

    def check(self, value: object) -> None:
        """Raise :class:`SchemaError` unless ``value`` fits this column exactly (never coerced)."""
        if value is None:
            if not self.nullable:
                raise SchemaError(f"column {self.name!r} may not be null")
            return
        if self.kind == "text":
            self._check_text(value)
        elif self.kind == "bool":
            if not isinstance(value, bool):
                raise SchemaError(f"column {self.name!r} expects a bool")
        elif self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise SchemaError(f"column {self.name!r} expects an integer")
            if not MIN_INT <= value <= MAX_INT:
                raise SchemaError(f"column {self.name!r}: integer out of 64-bit range")
        elif not isinstance(value, float) or not math.isfinite(value):
            raise SchemaError(f"column {self.name!r} expects a finite float")

    def _check_text(self, value: object) -> None:
        if not isinstance(value, str):
            raise SchemaError(f"column {self.name!r} expects text")
        try:
            size = len(value.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise SchemaError(f"column {self.name!r}: text is not valid Unicode") from exc
        if size > self.max_bytes:
            raise SchemaError(
                f"column {self.name!r}: text of {size} bytes exceeds {self.max_bytes}"
            )
        if "\x00" in value:
            raise SchemaError(f"column {self.name!r}: text contains a NUL character")


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

    def check_values(self, values: tuple[object, ...]) -> None:
        """Validate a full row of values in column order.

        The common cases (ASCII text, plain integers, bools) are accepted inline; anything else
        goes through :meth:`Column.check`, which decides exactly and names the problem. This
        runs for every delta written or received, so the fast path is worth its few lines.
        """
        if len(values) != len(self.columns):
            raise SchemaError(
                f"table {self.name!r} has {len(self.columns)} columns, a delta gave {len(values)}"
            )
        for column, value in zip(self.columns, values, strict=True):
            kind, kind_of = column.kind, type(value)
            if kind == "text" and kind_of is str:
                text: str = value  # type: ignore[assignment]
                if text.isascii() and len(text) <= column.max_bytes and "\x00" not in text:
                    continue
            elif (kind == "int" and kind_of is int and MIN_INT <= value <= MAX_INT) or (  # type: ignore[operator]
                kind == "bool" and kind_of is bool
            ):
                continue
            column.check(value)

    def tombstone_values(self, row_id: str) -> tuple[Value, ...]:
        """The row a hard delete leaves behind: the id, every other column emptied."""
        empty: dict[Kind, Value] = {"text": "", "int": 0, "real": 0.0, "bool": False}
        return (row_id,) + tuple(None if c.nullable else empty[c.kind] for c in self.columns[1:])


_ID = Column("id", "text", max_bytes=128)

EPISODES = Table(
    "episodes",
    1,
    (
        _ID,
        Column("session_id", "text", max_bytes=256),
        Column("summary", "text"),
        Column("entities", "text"),
        Column("created_at", "int"),
        Column("archived", "bool"),
    ),
    fts=("summary", "entities"),
)

FACTS = Table(
    "facts",
    2,
    (
        _ID,
        Column("subject", "text", max_bytes=4096),
        Column("predicate", "text", max_bytes=1024),
        Column("object", "text"),
        Column("confidence", "real"),
        Column("source_episode", "text", nullable=True, max_bytes=128),
        Column("created_at", "int"),
        Column("archived", "bool"),
    ),
    fts=("subject", "predicate", "object"),
)

EXEC_LOG = Table(
    "exec_log",
    3,
    (
        _ID,
        Column("session_id", "text", max_bytes=256),
        Column("tool", "text", max_bytes=1024),
        Column("args", "text"),
        Column("result", "text"),
        Column("latency_ms", "int"),
        Column("success", "bool"),
        Column("created_at", "int"),
    ),
    fts=(),
)

TABLES: tuple[Table, ...] = (EPISODES, FACTS, EXEC_LOG)
_BY_NAME = {t.name: t for t in TABLES}
_BY_CODE = {t.code: t for t in TABLES}


def table_by_name(name: object) -> Table:
    """The table called ``name``, or :class:`SchemaError` if no replicated table has that name."""
    table = _BY_NAME.get(name) if isinstance(name, str) else None
    if table is None:
        raise SchemaError(f"unknown table {name!r}")
    return table


def table_by_code(code: object) -> Table:
    """The table with wire code ``code``, or :class:`SchemaError`."""
    table = _BY_CODE.get(code) if isinstance(code, int) and not isinstance(code, bool) else None
    if table is None:
        raise SchemaError(f"unknown table code {code!r}")
    return table
