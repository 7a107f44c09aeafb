"""The replicated schema: which tables travel between nodes, their columns and value types.

A schema is a value (:class:`Schema`): this release's is :data:`BASE_SCHEMA`, and a newer one is
made from it with :meth:`Schema.with_column`, never by changing it. The schema a store was opened
with is the single source for storage's statements and for validating every delta that arrives
from a peer: a delta can only name a table and columns listed there, so it can never name SQL
(DESIGN §5). Derived data (FTS, vectors, wiki pages) is not listed: it never travels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from .column import MAX_INT, MAX_TEXT_BYTES, MIN_INT, Column, Value
from .errors import SchemaError
from .table import Table

__all__ = [
    "BASE_SCHEMA",
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
    "STORAGE_COLUMNS",
    "TABLES",
    "Column",
    "Schema",
    "Table",
    "Value",
    "table_by_code",
    "table_by_name",
]

SCHEMA_VERSION = 3
"""The replicated schema this release defines (:data:`BASE_SCHEMA`'s version)."""

STORAGE_COLUMNS = frozenset({"hlc", "origin", "deleted", "opaque"})
"""Columns storage keeps beside every replicated row (its version, and the values of columns
unknown here): no replicated column may take one of these names."""


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


@dataclass(frozen=True)
class Schema:
    """A replicated schema as a value: its tables, in code order, and its version.

    Whatever depends on which columns a table has (storage's statements, the rows it reads and
    writes) takes the schema its store was opened with, so a node of a newer release is a store
    opened with a wider schema (:meth:`with_column`), and this release's own
    (:data:`BASE_SCHEMA`) never changes under anyone. Values compare and hash by their tables
    and version; the hash is kept, since storage caches its statements by schema.
    """

    tables: tuple[Table, ...]
    version: int
    _by_name: Mapping[str, Table] = field(init=False, repr=False, compare=False)
    _by_code: Mapping[int, Table] = field(init=False, repr=False, compare=False)
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name = {t.name: t for t in self.tables}
        by_code = {t.code: t for t in self.tables}
        if len(by_name) != len(self.tables) or len(by_code) != len(self.tables):
            raise SchemaError("a schema names each table and each table code once")
        object.__setattr__(self, "_by_name", by_name)
        object.__setattr__(self, "_by_code", by_code)
        object.__setattr__(self, "_hash", hash((self.tables, self.version)))

    def __hash__(self) -> int:
        return self._hash

    def by_name(self, name: object) -> Table:
        """The table called ``name``, or :class:`SchemaError` if no table has that name."""
        table = self._by_name.get(name) if isinstance(name, str) else None
        if table is None:
            raise SchemaError(f"unknown table {name!r}")
        return table

    def by_code(self, code: object) -> Table:
        """The table with wire code ``code``, or :class:`SchemaError`."""
        table = None
        if isinstance(code, int) and not isinstance(code, bool):
            table = self._by_code.get(code)
        if table is None:
            raise SchemaError(f"unknown table code {code!r}")
        return table

    def with_column(self, table_name: str, column: Column) -> Schema:
        """A new schema: this one with a nullable ``column`` appended to ``table_name``, as
        schema version ``column.added_in`` does (this one is left as it was).

        The rules of docs/PROTOCOL.md §10: the column is nullable, of the next version (or of
        this one, if this one already added a column), and its name is new to the table, has
        no leading ``_`` and is none of storage's own (:data:`STORAGE_COLUMNS`).
        """
        table, version = self.by_name(table_name), column.added_in
        extension = any(c.added_in == self.version for t in self.tables for c in t.columns)
        allowed = {self.version + 1, *([self.version] if extension else [])}
        if not column.nullable or version not in allowed:
            raise SchemaError(
                f"an added column must be nullable, added_in {self.version + 1}: {column}"
            )
        name = column.name
        if name in table.column_names or name.startswith("_") or name in STORAGE_COLUMNS:
            raise SchemaError(f"table {table_name!r} cannot take a column named {name!r}")
        wider = replace(table, columns=(*table.columns, column))
        return Schema(tuple(wider if t is table else t for t in self.tables), version)


BASE_SCHEMA = Schema(TABLES, SCHEMA_VERSION)
"""This release's replicated schema."""

table_by_name = BASE_SCHEMA.by_name
"""The table of :data:`BASE_SCHEMA` called ``name`` (table names and codes are the same in
every schema version; only a table's columns grow)."""
table_by_code = BASE_SCHEMA.by_code
"""The table of :data:`BASE_SCHEMA` with wire code ``code``."""
