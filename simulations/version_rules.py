"""The convergence machine's rules for mixed versions (docs/PROTOCOL.md §10).

- **Two schema versions.** A device of the next schema version writes a fact with a value in a
  column the others do not know (one more value at the end of the row, as that version's
  ``facts`` has one more nullable column). Every other device keeps it opaque, relays it and
  carries it into its own edits of the row, so at the end the exports (which show opaque values)
  are byte-identical and every row holds its LWW winner in its wire form
  (simulations/model.py): a relay that dropped the value, or an edit that wiped it, fails.
- **No common protocol version.** Two devices whose ranges share no version open a link: both
  sessions must refuse at the Hello with ``protocol_mismatch``, naming the older one as the one
  to upgrade, open nothing, and leave both stores as they were.

A mixin of :class:`~simulations.test_convergence.ConvergenceMachine`, as
simulations/memory_rules.py is.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import rule

from feral.storage.db.connection import Connection
from feral.storage.log import delta_log, row_digest
from feral.storage.memory import memories
from feral.sync.events import Authenticated, Failed
from feral.sync.ids import fact_id
from feral.sync.schema import FACTS
from feral.sync.types import NodeId, RowId
from feral.sync.versions import ProtocolRange

from .cluster import Cluster
from .convergence_draws import Triple, node_index, triples
from .model import SimulationError
from .simnode import SimNode

__all__ = ["NEWER_VALUES", "VersionRules", "write_newer_column"]

NEWER_VALUES = ["teal", "amber", ""]
"""Values of the column only the next schema version has."""


def write_newer_column(
    conn: Connection,
    origin: NodeId,
    stamp: memories.Stamp,
    triple: Triple,
    value: str,
    *,
    now_ms: int,
) -> None:
    """Write ``value`` into the next schema version's column of a fact, as a device of that
    version does: the fact's row (a new one if it is not live here) with one more value."""
    row_id = fact_id(*triple)
    record = conn.execute(
        f"{memories.select_sql(FACTS)} WHERE id = ? AND deleted = 0", (row_id,)
    ).fetchone()
    if record is None:
        known = (row_id, *(p.strip() for p in triple), 1.0, None, now_ms, False)
    else:
        row = memories.row_dict(FACTS, record)
        known = tuple(row[name] for name in FACTS.column_names)
    memories.commit_local(conn, origin, stamp, [(FACTS, RowId(row_id), (*known, value))])


def _holdings(node: SimNode) -> tuple[object, ...]:
    return delta_log.version_vector(node.conn), row_digest.row_digest(node.conn)


class VersionRules:
    """Rules of devices at other versions (a mixin: the machine provides its cluster and picks
    its devices)."""

    @property
    def c(self) -> Cluster:
        raise NotImplementedError

    def node(self, i: int) -> SimNode:
        raise NotImplementedError

    @rule(node=node_index, triple=triples, value=st.sampled_from(NEWER_VALUES))
    def write_newer_column(self, node: int, triple: Triple, value: str) -> None:
        n = self.node(node)
        n.commit(write_newer_column, triple, value, now_ms=n.wall())

    @rule(first=node_index, other=st.integers(1, 4), newer_first=st.booleans())
    def link_without_a_common_protocol(self, first: int, other: int, newer_first: bool) -> None:
        a = self.node(first)
        b = self.node((first + other) % len(self.c.nodes))
        if a is b or a.is_down or b.is_down:
            return
        old, new = ProtocolRange(3, 3), ProtocolRange(4, 5)
        ranges = (new, old) if newer_first else (old, new)
        before = (_holdings(a), _holdings(b))
        sessions = [n.new_session(100, ranges[i]) for i, n in enumerate((a, b))]
        for _ in range(4):  # Hellos, then the refusals, then nothing
            frames = [s.frames_to_send() for s in sessions]
            for session, incoming in zip(sessions, reversed(frames), strict=True):
                for frame in incoming:
                    session.receive_frame(frame)
        older = b if newer_first else a
        for session in sessions:
            events = session.events_received()
            own = [e for e in events if isinstance(e, Failed) and not e.remote]
            opened = any(isinstance(e, Authenticated) for e in events)
            if opened or [e.code for e in own] != ["protocol_mismatch"]:
                raise SimulationError(f"a link without a common protocol gave {events!r:.300}")
            if not own[0].message.endswith(f"upgrade feral on {older.name} {older.node_id}"):
                raise SimulationError(f"the refusal names the wrong side: {own[0].message}")
        if (_holdings(a), _holdings(b)) != before:
            raise SimulationError("a link without a common protocol changed a store")
