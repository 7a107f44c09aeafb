"""One simulated device: a real SQLite store, its own clock, and a real session per link.

:class:`SimNode` pumps each link's session over the simulated network and answers its events with
the product's own handler (storage/link/handler.py's ``LinkHandler``, which node/links/peer.py's
``PeerLink`` drives too), and writes exactly as node/node_kernel.py's ``NodeKernel`` does
(``memories.*`` under ``run_write`` with the clock's ``tick`` as the stamp, then ``local_changed``
on every open link).
Storage functions are looked up on their modules at call time, so a test can swap one for a broken
variant.

Where the node is asynchronous (``notify_changed`` schedules the pushes as tasks), the
simulation pushes at once: one of the schedules the real node may take.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, ParamSpec

from feral.storage.absorb import conflicts
from feral.storage.db.connection import Connection
from feral.storage.link.handler import FailureLog, Handled, LinkHandler, writes
from feral.storage.log import delta_log, erase
from feral.storage.log.fork_queue import has_queued
from feral.storage.memory import stats as store_stats
from feral.storage.memory.memories import Stamp
from feral.storage.store import open_sync, run_write
from feral.sync.codec import SPOKEN
from feral.sync.delta import Page
from feral.sync.errors import FeralError, NotFoundError
from feral.sync.hlc import COUNTER_BITS, DEFAULT_MAX_DRIFT_MS, HybridClock, delta_limit_ms
from feral.sync.session import Event, Failed, LocalPeer, PageReceived, State, SyncSession
from feral.sync.snapshot import BEYOND_THE_WINDOW, SnapshotReceived, SnapshotSession
from feral.sync.types import NodeId, PackedHLC, VersionVector
from feral.sync.versions import ProtocolRange

from .faults import Faults, FaultyConnection
from .keys import KeyPair
from .model import SimulationError
from .network import EOF, Frame, ManualClock

if TYPE_CHECKING:
    from .cluster import Cluster

__all__ = ["MAX_EVENTS_PER_PUMP", "MAX_SKEW_MS", "SimNode"]

P = ParamSpec("P")

MAX_SKEW_MS = 300_000
SNAPSHOT_ABOVE = 6
"""A new device gets a snapshot once its sponsor's log holds more entries than this (the
product's default is 1,000; the simulated logs are small)."""
"""The skew window every simulated node uses (FERAL's five minutes)."""

MAX_EVENTS_PER_PUMP = 1_000
"""Events one frame (or one local commit) may cause before the loop answering them is called a
spin; a real one is a handful (a request, its pages, the next request)."""

SIM_LOG = logging.getLogger("simulations.peer")
"""Where the simulated devices' serve logs go: counted (``failure_lines``), never printed."""
SIM_LOG.addHandler(logging.NullHandler())
SIM_LOG.propagate = False

DRIFT_MS = max(DEFAULT_MAX_DRIFT_MS, MAX_SKEW_MS)
"""The clock's drift limit, chosen as node/node_kernel.py chooses it."""


def read_mark(node: SimNode) -> int:
    """node/clock_mark.py's ``read_mark``: the device's home file, which outlives restarts and
    restores of its database (looked up at call time, so broken.py can replace it)."""
    return node.mark


class SimNode:
    """A device of the cluster. Its database lives in a file, so a restart keeps it."""

    def __init__(
        self, cluster: Cluster, name: str, keys: KeyPair, path: Path, wall: ManualClock
    ) -> None:
        self.cluster = cluster
        self.name = name
        self.keys = keys
        self.path = path
        self.wall = wall
        self.links: dict[NodeId, LinkHandler] = {}
        """The open links by peer: each holds its session (storage/link/handler.py)."""
        self.eof_sent: set[NodeId] = set()
        self.last_error: dict[NodeId, str] = {}
        self.problems: list[str] = []
        """What the oracle saw go wrong while this node worked (checked after every step)."""
        self.high_water = 0
        self.mark = 0
        """The clock mark kept beside the database (node/clock_mark.py): a restore keeps it."""
        self.sessions_made = 0
        self.faults = Faults()
        """What is wrong with its disk (simulations/faults.py): it outlives restarts."""
        self.failures = FailureLog(SIM_LOG)
        """The serve log's account of failing links, kept by the node's own rule."""
        self.erased_words: frozenset[str] = frozenset()
        """Words of rows nuked before this device joined: it must never receive them."""
        self._conn: Connection | None = None
        self.clock = HybridClock(self.node_id, wall, max_drift_ms=DRIFT_MS)
        self.open()

    @property
    def node_id(self) -> NodeId:
        return self.keys.node_id

    @property
    def conn(self) -> Connection:
        """The open database (a device that is down has none: a step on it is a bug)."""
        if self._conn is None:
            raise SimulationError(f"{self.name} is down: its database is closed")
        return self._conn

    @property
    def is_down(self) -> bool:
        """Whether the database is closed (a device stopped by a rule)."""
        return self._conn is None

    @property
    def stats(self) -> Counter[str]:
        return self.cluster.stats

    # -- life cycle ----------------------------------------------------------------------------

    def open(self) -> None:
        """Open the database; the clock resumes from the mark kept beside it, then from the
        stored high-water mark inside each write transaction, as ``Node.open`` does."""
        self._conn = FaultyConnection(open_sync(self.path, synchronous="NORMAL"), self.faults)
        self.clock = HybridClock(self.node_id, self.wall, read_mark(self), max_drift_ms=DRIFT_MS)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def vector(self) -> VersionVector:
        return delta_log.version_vector(self.conn)

    def session(self, peer: NodeId) -> SyncSession | None:
        """The session of the open link with ``peer``, if there is one."""
        link = self.links.get(peer)
        return None if link is None else link.session

    def new_session(self, page_limit: int, protocols: ProtocolRange = SPOKEN) -> SyncSession:
        self.sessions_made += 1
        seed = f"{self.node_id}:{self.sessions_made}".encode()
        local = LocalPeer(
            node_id=self.node_id,
            public_key=self.keys.public,
            name=self.name,
            epoch=store_stats.log_epoch(self.conn),
            sign=self.keys.sign,
            verify=self.cluster.keys.verify,
            fingerprint=self.cluster.fingerprint,
            is_paired=self.cluster.is_paired,
            now_ms=self.wall,
            max_skew_ms=MAX_SKEW_MS,
            nonce=hashlib.sha256(seed).digest(),
            protocols=protocols,
        )
        return SnapshotSession(local, page_limit=page_limit)

    # -- local writes (node/node_kernel.py) ----------------------------------------------------

    def commit(
        self,
        fn: Callable[Concatenate[Connection, NodeId, Stamp, P], object],
        /,
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> int:
        """Run one local write as ``Node`` does and record what it stamped; returns how many.

        A write the product refuses (``NotFoundError`` for an unknown id) writes nothing.
        """
        before = self.vector()
        issued: list[int] = []
        self.clock.last = PackedHLC(read_mark(self))  # Node resumes from the mark at each write

        def stamp(floor: int) -> int:
            hlc = self.clock.tick(floor)
            issued.append(hlc)
            return hlc

        try:
            run_write(self.conn, fn, self.node_id, stamp, *args, **kwargs)
        except NotFoundError:
            self.stats["refused_local"] += 1
            return 0
        except FeralError:  # the disk is full: the user's write fails, nothing is written
            self.stats["refused_local_storage"] += 1
            return 0
        erase.finish_erasing(self.conn)  # Node.after_write: a nuke empties the WAL
        if issued:
            self.mark = max(self.mark, issued[-1])  # Node writes it inside the transaction
        # Its own newest stamp: another origin's stamps never lift the clock (sync/hlc.py).
        self._record_local(issued, before.get(self.node_id, 0))
        self.notify()
        return len(issued)

    def _record_local(self, issued: list[int], high_water: int) -> None:
        if not issued:
            return
        if issued[0] <= high_water or issued != sorted(set(issued)):
            self.problems.append(
                f"{self.name} stamped {issued} at or below its high-water mark {high_water}"
            )
        theirs = self.vector()
        theirs[self.node_id] = min(issued) - 1
        held = {d.hlc: d for p in delta_log.changes_since(self.conn, theirs, 10_000)
                for d in p.deltas}  # fmt: skip
        mine = [held[h] for h in issued if h in held]
        self.cluster.ledger.record(mine)
        self.cluster.sightings.note(self.conn, mine)  # simulations/conflict_oracle.py
        self.stats["local_writes"] += len(issued)

    def notify(self, exclude: NodeId | None = None) -> None:
        """``Node.notify_changed``: every authenticated link but ``exclude`` hears of it."""
        for peer, link in list(self.links.items()):
            if peer != exclude and link.session.state is State.OPEN:
                link.session.local_changed()
                self.pump(peer)

    # -- one link (node/links/peer.py) -------------------------------------------------------------

    def open_link(self, peer: NodeId, page_limit: int, *, dialled: bool) -> None:
        """A new connection with ``peer``: a fresh session and handler, as ``PeerLink`` makes.

        The side that ``dialled`` expects ``peer`` (the node dials a paired URL); the other side
        learns who it talks to at the handshake, as ``feral serve`` does.
        """
        self.links[peer] = LinkHandler(
            self.new_session(page_limit),
            expected=peer if dialled else None,
            url=f"sim://{peer[:6]}",
            logger=SIM_LOG,
            snapshot_above=SNAPSHOT_ABOVE,
        )
        self.eof_sent.discard(peer)

    def anti_entropy(self, peer: NodeId) -> None:
        """``PeerLink.anti_entropy`` (node/serve/service.py runs it every few minutes)."""
        link = self.links.get(peer)
        if link is not None:
            link.anti_entropy(self.conn)
            self.pump(peer)

    def pump(self, peer: NodeId) -> None:
        """Answer every event of the link with ``peer``, then queue its frames for sending."""
        link = self.links.get(peer)
        if link is None:
            return
        session = link.session
        handled = 0
        while events := session.events_received():
            for event in events:
                if not self._handle(peer, link, event):
                    break  # the store failed: the rest of the events are not answered
            handled += len(events)
            if handled > MAX_EVENTS_PER_PUMP:
                raise SimulationError(
                    f"{self.name}'s link with {peer[:6]} keeps raising events without reading "
                    f"a frame (last: {events[-1]!r:.200}): the node would spin here"
                )
        if not self.is_down and has_queued(self.conn):
            # node/curation/conflicts.py: the conflicts the pages made, once the link's events are
            # answered (a local write that notifies every link, this one too, as Node's does);
            # one that failed on a full disk is retried at the next pump
            self.commit(conflicts.record_queued)
        frames: list[Frame] = list(session.frames_to_send())
        if session.state >= State.CLOSING and peer not in self.eof_sent:
            self.eof_sent.add(peer)
            frames.append(EOF)
        self.cluster.network.send((self.node_id, peer), frames)

    def _handle(self, peer: NodeId, link: LinkHandler, event: Event) -> bool:
        """The product's handler (storage/link/handler.py), then what ``PeerLink`` does after it,
        plus the oracle's bookkeeping. Returns ``False`` once the store failed under the link."""
        if isinstance(event, Failed):
            self._failed(peer, event)
        now = self.wall()
        injected = self.faults.injected
        try:
            if writes(event):
                handled: Handled = run_write(self.conn, link.handle, event)
            else:
                handled = link.handle(self.conn, event)
        except FeralError as exc:
            self._store_failed(peer, link, exc)
            return False
        finally:
            self._check_dropped(peer, link, injected)
        if handled.authenticated:
            self.failures.recovered(peer)
        if handled.holes:
            self.stats["repairs"] += 1
        if isinstance(event, PageReceived):
            self._received(peer, event.page, handled, now)
        elif isinstance(event, SnapshotReceived):  # its rows are checked as a page's deltas
            self._received(peer, Page(peer, 0, event.page.rows), handled, now)
        return True

    def _store_failed(self, peer: NodeId, link: LinkHandler, exc: FeralError) -> None:
        """``PeerLink._store_failed``: refuse the link (the handler's own rule), say so once in
        the log, and record it in status if the database lets us."""
        message = str(exc)
        link.store_failed(message)
        self.stats["links_failed_storage"] += 1
        self.stats["failure_lines"] += self.failures.failed(peer, message)
        try:
            run_write(self.conn, link.record_failure, "storage_error", message, unreachable=False)
        except FeralError as again:
            self.stats["failure_lines"] += self.failures.failed(peer, str(again))

    def _check_dropped(self, peer: NodeId, link: LinkHandler, injected: int) -> None:
        """Oracle: a write that failed while answering an event ends the link, refused with
        ``storage_error``: a link that went on would ack, or stream past, what it lacks."""
        if self.faults.injected == injected or link.session.state >= State.CLOSING:
            return
        self.problems.append(
            f"{self.name}'s write failed under its link with {peer[:6]}, and the link went on"
        )

    def _failed(self, peer: NodeId, event: Failed) -> None:
        """Record a failed link. Oracle: an honest connection never ends in ``log_diverged``
        (a repair that runs to completion closes its hole, whatever else happens meanwhile:
        anti-entropy, live pushes, the peer's own writes). An honest snapshot refused as
        ``unsolicited_snapshot`` is counted (``honest_snapshot_refusals``), not a problem: a log
        stream that turns into a snapshot without a new Vector is still refused, and the next
        connection's Vector licenses it (docs/PROTOCOL.md §7); the fixed cases are pinned in
        simulations/test_snapshot_license.py. A snapshot stamped beyond twice the window of
        this clock is refused under that code by design, and not counted."""
        self.last_error[peer] = f"{event.code}: {event.message}"
        self.stats[f"failed_{event.code}"] += not event.remote
        connection = self.cluster.network.connection(self.node_id, peer)
        honest = connection is not None and not connection.tampered
        if event.remote or not honest:
            return
        if event.code == "log_diverged":
            self.problems.append(f"{self.name}'s repair from {peer[:6]} failed: {event.message}")
        elif event.code == "unsolicited_snapshot" and event.message != BEYOND_THE_WINDOW:
            self.stats["honest_snapshot_refusals"] += 1

    def _received(self, peer: NodeId, page: Page, handled: Handled, now: int) -> None:
        """After a page: the oracle's window check, the counts, and the push to other links."""
        if handled.refused is not None:
            self.stats[f"page_refused_{handled.refused}"] += 1
        if self.erased_words:
            self._check_erased(peer, page)
        if not handled.committed:
            return
        self._check_window(page, now)
        if handled.applied:
            erase.finish_erasing(self.conn)  # Node.remote_applied
            self.stats["deltas_applied"] += handled.applied
            self.notify(exclude=peer)

    def _check_erased(self, peer: NodeId, page: Page) -> None:
        """Oracle: a device that joined after a nuke never receives the nuked row's words."""
        for delta in page.deltas:
            if delta.values is not None and self.erased_words & set(map(str, delta.values)):
                self.problems.append(
                    f"{self.name}, which joined after a nuke, received its words from "
                    f"{peer[:6]} ({delta.origin[:6]}@{delta.hlc})"
                )

    def _check_window(self, page: Page, now: int) -> None:
        """Oracle: a page that was accepted holds no stamp further ahead at receipt than
        received stamps may be (twice the window, docs/REPLICATION.md §7)."""
        limit = delta_limit_ms(MAX_SKEW_MS)
        for delta in page.deltas:
            ahead = (delta.hlc >> COUNTER_BITS) - now
            if ahead > limit:
                self.problems.append(
                    f"{self.name} applied a stamp {ahead} ms ahead of its clock "
                    f"(limit {limit} ms) from {delta.origin[:6]}"
                )
