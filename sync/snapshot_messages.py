"""The snapshot's two messages (docs/PROTOCOL.md §3 and §7, "Snapshots on the wire"); the flow
that sends them is sync/snapshot.py's. Kept apart so the codec can decode them without the session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .delta import Delta, check_node_id
from .errors import DecodeError, ProtocolError
from .hlc import MAX_PACKED
from .messages import MAX_ORIGINS, Vector
from .schema import BASE_SCHEMA, Schema, table_by_code
from .types import NodeId, RowId, VersionVector

__all__ = ["MAX_SNAPSHOT_ROWS", "SnapshotAck", "SnapshotPage"]

MAX_SNAPSHOT_ROWS = 1000
"""Most rows one snapshot page may carry, like a log page's deltas."""


@dataclass(frozen=True)
class SnapshotPage:
    """Rows of one table with ids in ``(after, through]`` (``through`` None: to the end of the
    table), as the sender holds them, with the snapshot's ``vector`` and ``entries``, and
    ``collected``: a stamp older versions sent (the newest tombstone they had collected);
    decoded and ignored (docs/REPLICATION.md §6: trusting it let one page wipe its receiver).

    ``rows`` are :class:`Delta` objects (the row's table, id, version and values; ``None``
    values for a tombstone), so they are checked and merged as deltas are.
    """

    KIND: ClassVar[int] = 10
    vector: VersionVector
    entries: dict[NodeId, int]
    collected: int
    table: int
    after: str
    through: str | None
    rows: tuple[Delta, ...]
    final: bool

    def to_fields(self) -> list[object]:
        rows = [[d.row_id, d.hlc, d.origin, None if d.values is None else list(d.values[1:])]
                for d in self.rows]  # fmt: skip
        return [*Vector(self.vector).to_fields(), *Vector(self.entries).to_fields(),
                self.collected, self.table, self.after, self.through, rows,
                self.final]  # fmt: skip

    @classmethod
    def from_fields(cls, fields: list[object]) -> SnapshotPage:
        if len(fields) != 8:
            raise DecodeError(f"snapshot page has {len(fields)} fields, expected 8")
        vector, entries, collected, code, after, through, rows, final = fields
        if type(collected) is not int or not 0 <= collected <= MAX_PACKED:
            raise DecodeError("a snapshot page's collected mark must be an integer")
        schema = table_by_code(code)
        table = schema.name
        if not isinstance(after, str) or not (through is None or isinstance(through, str)):
            raise DecodeError("a snapshot page's range must be row ids (through may be nil)")
        if not isinstance(rows, list) or len(rows) > MAX_SNAPSHOT_ROWS:
            raise DecodeError(f"a snapshot page holds at most {MAX_SNAPSHOT_ROWS} rows")
        if not isinstance(final, bool) or (final and through is not None):
            raise DecodeError("a snapshot page's final flag must be a bool, on a table's end")
        held = tuple(_row(table, r) for r in rows)
        page = cls(Vector.from_fields([vector]).vector, Vector.from_fields([entries]).vector,
                   collected, schema.code, after, through, held, final)  # fmt: skip
        page.check()
        return page

    def check(self, schema: Schema = BASE_SCHEMA) -> None:
        """Every row valid (against ``schema``: :meth:`Delta.check`), of this page's table, ids
        increasing inside ``(after, through]``."""
        previous = self.after
        for delta in self.rows:
            delta.check(schema)
            if not delta.row_id > previous:
                raise ProtocolError("a snapshot page's ids must increase above its 'after'")
            previous = delta.row_id
        if self.through is not None and previous > self.through:
            raise ProtocolError("a snapshot page holds a row beyond its 'through'")
        if len(self.vector) > MAX_ORIGINS:
            raise DecodeError("too many origins in a snapshot's vector")

    def covers(self, row_version: tuple[int, str]) -> bool:
        """Whether the snapshot's vector says its sender has seen the write ``(hlc, origin)``."""
        hlc, origin = row_version
        return hlc <= self.vector.get(NodeId(origin), 0)


def _row(table: str, raw: object) -> Delta:
    if not isinstance(raw, list) or len(raw) != 4:
        raise DecodeError("a snapshot row must be an array of 4 items")
    row_id, hlc, origin, rest = raw
    if not isinstance(row_id, str):
        raise DecodeError("a snapshot row's id must be text")
    if rest is not None and not isinstance(rest, list):
        raise DecodeError("a snapshot row's values must be an array or nil")
    values = None if rest is None else (row_id, *rest)
    return Delta(table, RowId(row_id), hlc, check_node_id(origin), values)


@dataclass(frozen=True)
class SnapshotAck:
    """The receiver committed the ``seq``-th snapshot page of this link (counted from 1)."""

    KIND: ClassVar[int] = 11
    seq: int

    def to_fields(self) -> list[object]:
        return [self.seq]

    @classmethod
    def from_fields(cls, fields: list[object]) -> SnapshotAck:
        if len(fields) != 1 or type(fields[0]) is not int or not 0 < fields[0] < 1 << 63:
            raise DecodeError("a snapshot ack is one positive integer")
        return cls(fields[0])
