"""The replicated schema: which tables travel between nodes, their columns and value types.

This registry is the single source for storage's DDL and for validating every delta that arrives
from a peer: a delta can only name a table and columns listed here, so it can never name SQL
(DESIGN §5). Derived data (FTS, vectors, wiki pages) is not listed: it never travels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from . import unknown
from .column import MAX_INT, MAX_TEXT_BYTES, MIN_INT, Column, Kind, Value
from .errors import SchemaError

__all__ = [
    "CONFLICTS",
    "EDGES",
    "ENTITIES",
    "EPISODES",
    "EXEC_LOG",
    "FACTS",
    "MAX_INT",
    "MAX_TEXT_BYTES",
    "MEMORY_META",
    "MIN_INT",
    "SCHEMA_VERSION",
    "TABLES",
    "Column",
    "Table",
    "Value",
    "add_column",
    "freeze",
    "schema_version",
    "table_by_code",
    "table_by_name",
]

SCHEMA_VERSION = 3
"""The replicated schema this release defines; :func:`schema_version` adds any extension."""
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


_frozen = False
_extension_version: int | None = None


def schema_version() -> int:
    """The replicated schema this node stores: :data:`SCHEMA_VERSION`, or the version of the
    columns added by :func:`add_column`."""
    return SCHEMA_VERSION if _extension_version is None else _extension_version


def add_column(table_name: str, column: Column) -> None:
    """Append a nullable ``column`` to a replicated table, as schema version ``column.added_in``
    does: the extension point of a build that extends the schema without editing this file (the
    test of two schema versions side by side). Call it before ``feral.storage`` is imported
    (:func:`freeze`); its migration goes to ``feral.storage.db.migrations.register_migration``.
    The rules are in docs/PROTOCOL.md §10.
    """
    global _extension_version
    table, version, current = table_by_name(table_name), column.added_in, schema_version()
    if _frozen:
        raise SchemaError("schema extensions must be registered before feral.storage is imported")
    if not column.nullable or version not in {current, current + 1} - {SCHEMA_VERSION}:
        raise SchemaError(f"an added column must be nullable, added_in {current + 1}: {column}")
    if column.name in table.column_names or column.name.startswith("_"):
        raise SchemaError(f"table {table_name!r} cannot take a column named {column.name!r}")
    object.__setattr__(table, "columns", (*table.columns, column))
    _extension_version = version


def freeze() -> None:
    """No more :func:`add_column`: storage has built its statements from the registry."""
    global _frozen
    _frozen = True
