"""The replicated schema: which tables travel between nodes, their columns and value types.

This registry is the single source for storage's DDL and for validating every delta that arrives
from a peer: a delta can only name a table and columns listed here, so it can never name SQL
(DESIGN §5). Derived data (FTS, vectors, wiki pages) is not listed: it never travels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .errors import SchemaError

__all__ = [
    "CONFLICTS",
    "EDGES",
    "ENTITIES",
    "EPISODES",
    "EXEC_LOG",
    "FACTS",
    "MEMORY_META",
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

_PY_TYPE: dict[Kind, type] = {"text": str, "int": int, "real": float, "bool": bool}
"""The one Python type of each kind (a ``bool`` is no ``int`` here, as in :meth:`Column.check`)."""
_NONE_TYPE = type(None)
_PLAIN_TYPES = frozenset({*_PY_TYPE.values(), _NONE_TYPE})
"""The exact types :meth:`Column.accepts_all` answers for itself; other types go to ``check``."""
_INF = math.inf

SCHEMA_VERSION = 3
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

    def accepts_all(self, values: Sequence[object]) -> bool:
        """Whether :meth:`check` accepts every one of ``values``: the same verdict, for a batch.

        Each step is one loop in C over the whole column (type set, min/max, one join), where
        :meth:`check` costs a Python call per value; that saving is why the rules are written
        twice, and the property tests in tests/sync/test_fast_paths.py hold the two to the same
        verdict for values of every type. A value of an unusual type (a subclass of ``str``,
        say) gets :meth:`check`'s own verdict. On ``False`` the caller checks value by value,
        which names the first problem.
        """
        types = set(map(type, values))
        if _NONE_TYPE in types:
            if not self.nullable:
                return False
            types.discard(_NONE_TYPE)
            values = [v for v in values if v is not None]
        if not types:
            return True  # no values, or only nulls where null is allowed
        if types == {_PY_TYPE[self.kind]}:
            return self._values_fit(values)
        if types <= _PLAIN_TYPES:
            return False  # a value of another plain type, which check refuses
        return all(map(self._passes, values))

    def _values_fit(self, values: Sequence[object]) -> bool:
        """:meth:`check`'s range rules for values that all have the kind's exact type."""
        if self.kind == "text":
            return self._texts_fit(values)  # type: ignore[arg-type]
        if self.kind == "int":
            return MIN_INT <= min(values) and max(values) <= MAX_INT  # type: ignore[type-var,operator]
        if self.kind == "real":
            return all(map(math.isfinite, values))  # type: ignore[arg-type]
        return True  # bool: the type is the whole check

    def _texts_fit(self, texts: Sequence[str]) -> bool:
        joined = "".join(texts)
        if "\x00" in joined:
            return False
        longest = max(map(len, texts))
        if joined.isascii():
            return longest <= self.max_bytes
        try:
            if longest * 4 <= self.max_bytes:  # UTF-8 spends at most 4 bytes on a character
                joined.encode("utf-8")  # fails on a lone surrogate anywhere (joining pairs none up)
                return True
            return max(map(len, map(str.encode, texts))) <= self.max_bytes
        except UnicodeEncodeError:
            return False

    def _passes(self, value: object) -> bool:
        try:
            self.check(value)
        except SchemaError:
            return False
        return True


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

        The common cases (ASCII text, plain integers, finite floats, bools, allowed nulls) are
        accepted inline; anything else goes through :meth:`Column.check`, which decides exactly
        and names the problem. This runs for every delta received, so the fast path is worth
        its few lines; it only ever accepts, and tests/sync/test_fast_paths.py holds it to
        :meth:`Column.check`'s verdict and message for values of every type.
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
        if set(map(len, rows)) != {len(self.columns)}:
            return False
        return all(
            column.accepts_all(values)
            for column, values in zip(self.columns, zip(*rows, strict=True), strict=True)
        )

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

MEMORY_META = Table(
    "memory_meta",
    4,
    (
        _ID,  # the id of the memory (a fact or an episode) this row describes
        Column("category", "text", max_bytes=32),
        Column("scope", "text", max_bytes=256),
        Column("importance", "real"),
        Column("importance_note", "text", max_bytes=1024),
        Column("updated_at", "int"),
    ),
    fts=(),
)
"""What a memory is and how much it counts, in a row of its own beside the memory's content.

Kept apart from the content so that a boost on one device and an archive on another, made while
apart, both survive the row-level merge: each edits its own row. A memory with no such row has
the defaults (category ``note``, scope ``user``, importance 1.0, updated when it was created).
"""

EDGES = Table(
    "edges",
    5,
    (
        _ID,  # derived from (type, from_id, to_id): the same link made on two devices is one row
        Column("from_id", "text", max_bytes=128),
        Column("to_id", "text", max_bytes=128),
        Column("type", "text", max_bytes=32),
        Column("note", "text", max_bytes=4096),
        Column("created_at", "int"),
        Column("archived", "bool"),
    ),
    fts=(),
)
"""Typed, directed links between memories: supersedes, contradicts, related_to, co_extracted,
consolidated."""

ENTITIES = Table(
    "entities",
    6,
    (
        _ID,  # derived from (type, normalised name): one entity per name and type everywhere
        Column("name", "text", max_bytes=1024),
        Column("type", "text", max_bytes=64),
        Column("created_at", "int"),
        Column("archived", "bool"),
    ),
    fts=(),
)
"""Typed entities of the graph. Their attributes and relations are facts whose subject (and,
for a relation, object) names the entity: triples and entities are one model."""

CONFLICT_VALUES_BYTES = 1_048_576
"""Cap on one side's row, as JSON: the widest reported row (an episode: 131,328 bytes of text at
its columns' caps) still fits if every character of it is escaped (six bytes each)."""

CONFLICTS = Table(
    "conflicts",
    7,
    (
        _ID,  # derived from (table, row id, both versions): one row per conflict everywhere
        Column("tbl", "text", max_bytes=64),
        Column("row_id", "text", max_bytes=128),
        Column("prior", "text", max_bytes=64),
        Column("version_a", "text", max_bytes=64),
        Column("values_a", "text", max_bytes=CONFLICT_VALUES_BYTES),
        Column("version_b", "text", max_bytes=64),
        Column("values_b", "text", max_bytes=CONFLICT_VALUES_BYTES),
        Column("detected_at", "int"),
        Column("resolved", "bool"),
        Column("kept", "text", max_bytes=64),
        Column("resolved_at", "int"),
    ),
    fts=(),
)
"""Two writes of one row that raced (sync/conflicts.py): both versions and both rows, kept so
that the one last-write-wins set aside is never lost. ``a`` is the older version of the two,
``b`` the one the merge prefers; ``prior`` the version both replaced (empty: none)."""

TABLES: tuple[Table, ...] = (
    EPISODES,
    FACTS,
    EXEC_LOG,
    MEMORY_META,
    EDGES,
    ENTITIES,
    CONFLICTS,
)
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
