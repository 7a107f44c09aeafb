"""Deltas (one row's new state, as written by one node) and pages of them.

A delta carries the *whole* replicated row, so the merge is row-level last-write-wins: the row
ends up equal to the delta with the greatest ``(hlc, origin)``. A hard delete is a delta whose
``values`` is ``None`` (a tombstone), so a deleted row cannot come back from an older write.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TypeGuard, cast

from .errors import ProtocolError, SchemaError
from .hlc import MAX_PACKED, Timestamp
from .schema import BASE_SCHEMA, Schema, Table, Value, table_by_name
from .types import NodeId, RowId

__all__ = [
    "MAX_PAGE_DELTAS",
    "NODE_ID_LENGTH",
    "Delta",
    "Page",
    "UNKNOWN_PRIOR",
    "Version",
    "accepts_batch",
    "check_node_id",
    "check_prior",
]

MAX_PAGE_DELTAS = 1000
"""Most deltas one page may carry: bounds every frame and every apply transaction."""

_NODE_ID_ALPHABET = frozenset("abcdefghijklmnopqrstuvwxyz234567")
NODE_ID_LENGTH = 32


def check_node_id(node_id: object) -> NodeId:
    """Return ``node_id`` if it is well formed (32 characters of lower-case base32)."""
    if not _is_node_id(node_id):
        raise ProtocolError(f"malformed node id {str(node_id)[:80]!r}")
    return NodeId(node_id)


def _is_node_id(node_id: object) -> TypeGuard[str]:
    return (
        isinstance(node_id, str)
        and len(node_id) == NODE_ID_LENGTH
        and set(node_id) <= _NODE_ID_ALPHABET
    )


def accepts_batch(
    table: str,
    origin: NodeId,
    row_ids: Sequence[RowId],
    rows: Sequence[tuple[Value, ...] | None],
) -> bool:
    """Whether each ``Delta(table, row_ids[i], hlc, origin, rows[i]).check()`` would pass, for
    any valid ``hlc``; ``False`` means "not sure" (tombstones, say), never "invalid".

    A local batch shares its table and origin, and its rows are tested a column at a time
    (:meth:`feral.sync.schema.Table.accepts_all`): a fraction of the cost of checking each delta.
    On ``False`` the caller checks delta by delta, which names the first problem exactly. For a
    batch of tuple rows the answer is exact; tests/sync/test_fast_paths.py holds it to
    :meth:`Delta.check` (the rules restated here for speed: the origin, the id column, the ids).
    """
    try:
        schema = table_by_name(table)
    except SchemaError:
        return False
    if not _is_node_id(origin) or set(map(type, rows)) != {tuple}:
        return False
    full = cast("Sequence[tuple[Value, ...]]", rows)  # no tombstones: every row is a tuple
    return (
        schema.columns[0].accepts_all(row_ids)
        and schema.accepts_all(full)
        and list(map(itemgetter(0), full)) == list(row_ids)
    )


@dataclass(frozen=True, order=True)
class Version:
    """Who last wrote a row and when: ``(hlc, origin)``, compared in that order."""

    hlc: int
    origin: NodeId

    @property
    def timestamp(self) -> Timestamp:
        return Timestamp.from_packed(self.hlc, self.origin)


UNKNOWN_PRIOR = Version(0, NodeId(""))
"""The prior of a log entry written before protocol version 3: nobody knows what it replaced,
so it is never part of a conflict (no real version has stamp 0)."""


def check_prior(prior: object) -> Version:
    """Return ``prior`` if it is a version a delta may name as the one it replaced."""
    if not isinstance(prior, Version):
        raise ProtocolError("a delta's prior must be a version")
    if prior == UNKNOWN_PRIOR:
        return prior
    if isinstance(prior.hlc, bool) or not isinstance(prior.hlc, int):
        raise ProtocolError("a prior's hlc must be an integer")
    if not 0 < prior.hlc <= MAX_PACKED:
        raise ProtocolError(f"prior hlc {prior.hlc} is out of range")
    check_node_id(prior.origin)
    return prior


@dataclass(frozen=True, init=False)
class Delta:
    """One write to one replicated row.

    Attributes:
        table: the replicated table's name.
        row_id: the row's primary key (also ``values[0]`` unless this is a tombstone).
        hlc: the packed HLC the origin stamped the write with.
        origin: the node that made the write.
        values: the full row in the table's column order, or ``None`` for a tombstone.
        prior: the version of the row this write replaced at its origin (``None``: the origin
            held no version of the row; :data:`UNKNOWN_PRIOR`: written before protocol 3, so
            not known). Relays pass it on unchanged; sync/conflicts.py tells concurrent
            writes from later ones by it.
    """

    table: str
    row_id: RowId
    hlc: int
    origin: NodeId
    values: tuple[Value, ...] | None
    prior: Version | None

    def __init__(
        self,
        table: str,
        row_id: RowId,
        hlc: int,
        origin: NodeId,
        values: tuple[Value, ...] | None,
        prior: Version | None = None,
    ) -> None:
        # What the generated __init__ of a frozen dataclass does through object.__setattr__,
        # written straight into the instance dict: a delta is made for every row written or
        # received, and this costs a fraction of five such calls.
        fields = self.__dict__
        fields["table"] = table
        fields["row_id"] = row_id
        fields["hlc"] = hlc
        fields["origin"] = origin
        fields["values"] = values
        fields["prior"] = prior

    @property
    def version(self) -> Version:
        return Version(self.hlc, self.origin)

    @property
    def is_tombstone(self) -> bool:
        return self.values is None

    def schema(self) -> Table:
        return table_by_name(self.table)

    def row_values(self) -> tuple[Value, ...]:
        """The row this delta leaves behind (a tombstone leaves the id and empty columns)."""
        if self.values is None:
            return self.schema().tombstone_values(self.row_id)
        return self.values

    def check(self, schema: Schema = BASE_SCHEMA) -> None:
        """Validate against a replicated schema (this release's unless given: a store of a
        wider one checks its own columns, storage/db/connection.py's ``schema_of``) and the
        clock's ranges.

        Raises:
            SchemaError: unknown table, wrong column count or a value of the wrong type.
            ProtocolError: malformed origin, stamp out of range, or id not matching the values.
        """
        table = schema.by_name(self.table)
        check_node_id(self.origin)
        if isinstance(self.hlc, bool) or not isinstance(self.hlc, int):
            raise ProtocolError("a delta's hlc must be an integer")
        if not 0 < self.hlc <= MAX_PACKED:
            raise ProtocolError(f"hlc {self.hlc} is out of range")
        table.columns[0].check(self.row_id)
        if self.prior is not None:
            check_prior(self.prior)
        if self.values is not None:
            table.check_values(self.values)
            if self.values[0] != self.row_id:
                raise SchemaError("a delta's row id differs from its id column")


@dataclass(frozen=True)
class Page:
    """A run of one origin's log entries, in increasing HLC order, continuing from ``after``.

    The receiver may apply a page only if it already holds the origin's entries up to ``after``
    (its version vector says so); otherwise applying it would leave a gap that the vector could
    not describe.

    Attributes:
        origin: whose log entries these are.
        after: the origin's packed HLC that the page continues from (0 = from the start).
        deltas: at most :data:`MAX_PAGE_DELTAS` entries, each stamped above the previous.
    """

    origin: NodeId
    after: int
    deltas: tuple[Delta, ...]

    def check(self, schema: Schema = BASE_SCHEMA) -> None:
        """Validate the page and every delta in it (against ``schema``: :meth:`Delta.check`)."""
        check_node_id(self.origin)
        if isinstance(self.after, bool) or not isinstance(self.after, int):
            raise ProtocolError("a page's 'after' must be an integer")
        if not 0 <= self.after <= MAX_PACKED:
            raise ProtocolError(f"page cursor {self.after} is out of range")
        if len(self.deltas) > MAX_PAGE_DELTAS:
            raise ProtocolError(
                f"a page holds {len(self.deltas)} deltas; at most {MAX_PAGE_DELTAS}"
            )
        previous = self.after
        for delta in self.deltas:
            delta.check(schema)
            if delta.origin != self.origin:
                raise ProtocolError("a page mixes origins")
            if delta.hlc <= previous:
                raise ProtocolError("a page's stamps must increase and lie above its cursor")
            previous = delta.hlc

    @property
    def last_hlc(self) -> int:
        """The cursor a receiver holds for this origin after applying the page."""
        return self.deltas[-1].hlc if self.deltas else self.after
