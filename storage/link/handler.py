"""What one link does with each event of its session, against this node's database.

The session (sync/session.py) never reads storage: it raises events, and whoever holds the
database answers them. This module is that answer, written once, so the node's links
(node/links/peer.py, over WebSockets) and the simulated devices (simulations/simnode.py, over a
simulated network) run the same code and the simulations test the product, not a copy of it.

It is synchronous and does no I/O beyond the connection it is handed, like every function in
storage/: the node runs :meth:`LinkHandler.handle` on its database thread through
``Store.write`` (or ``Store.read``, see :func:`writes`), the simulator calls it under
:func:`feral.storage.store.run_write`. One event is one transaction, so a page's rows and the
count of rows received from the peer commit together, and a refused page rolls its whole
transaction back: the page is the first thing that transaction writes.

What only the node does after an event (register the link, log, embed what arrived, push it to
the other links, report progress) is not done here: :class:`Handled` says what happened and the
caller acts on it. A value rather than callbacks, because in the node this code runs on the
database thread inside the transaction, where nothing asynchronous may be started or awaited,
and a push to another link must follow the commit, not precede it.

The storage functions are looked up on their modules at call time (``delta_log.apply_page``,
never a bound name), so simulations/broken.py can swap one for a broken variant and the
simulations catch it through this handler.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from feral.storage.db.connection import Connection, DatabaseError
from feral.storage.log import delta_log, row_digest
from feral.storage.store import roll_back
from feral.sync.delta import Delta
from feral.sync.errors import ClockSkewError, FeralError, ProtocolError
from feral.sync.holes import HoleRepair
from feral.sync.session import (
    CLOSE_INTERNAL,
    CLOSE_POLICY,
    CLOSE_PROTOCOL,
    Authenticated,
    DeltasRequested,
    Event,
    Failed,
    PageAcked,
    PageReceived,
    PeerCaughtUp,
    PeerPending,
    SyncSession,
)
from feral.sync.snapshot import SnapshotRequested
from feral.sync.types import NodeId

from . import peers as peer_status
from .failure_log import FailureLog
from .held_back import held_back_messages, holding_back_messages
from .snapshot_link import SNAPSHOT_EVENTS, answer_snapshot, handle_snapshot_event

__all__ = ["FailureLog", "Handled", "LinkHandler", "LinkResult", "writes"]

log = logging.getLogger("feral.peer")


@dataclass
class LinkResult:
    """How a link ended (``feral sync now`` prints it; status keeps the lasting part)."""

    peer: NodeId | None = None
    received: int = 0
    sent: int = 0
    quiet: bool = False
    error: str | None = None
    error_code: str | None = None
    diverged: bool = False
    """The peer holds other rows at equal vectors and counts (divergence)."""
    authenticated: bool = False
    """The peer proved itself and the link opened (a joiner's invitation was accepted)."""
    by_snapshot: bool = False
    """Rows arrived as a snapshot: the peer's log could not serve this device (it was away
    longer than the retention window, is new, or was restored), or the two held other rows."""


@dataclass(frozen=True)
class Handled:
    """What one event asks of the caller beyond the session's frames.

    Attributes:
        authenticated: the peer proved itself and was accepted (the node registers the link).
        committed: a received page was committed (the node reports progress).
        applied: rows that page added here (the node embeds them and tells its other links).
        refused: the error code a received page was refused with (the link is failing).
        holes: origins found with a hole in this copy, asked for again from the start.
        collisions: entries of that page whose stamp this node holds with other content: an
            integrity alarm (storage/log/integrity.py), recorded and never applied.
        progress: ``(received, total)`` of the catch-up the peer announced, after that page.
        diverged: the peer holds other rows although vectors and counts match.
    """

    authenticated: bool = False
    committed: bool = False
    applied: int = 0
    refused: str | None = None
    holes: frozenset[NodeId] = field(default_factory=frozenset)
    collisions: int = 0
    progress: tuple[int, int] | None = None
    diverged: bool = False


def writes(event: Event) -> bool:
    """Whether answering ``event`` writes: a request for deltas only reads, and runs outside a
    write transaction, so a peer catching up never holds the database's write lock."""
    return not isinstance(event, DeltasRequested | SnapshotRequested)


class LinkHandler:
    """Answers the events of one session with one peer.

    Args:
        session: the link's session; the handler calls its answers (``send_pages``, ``ack``,
            ``fail`` ...). The caller drains its frames and events.
        expected: the peer we dialled, if any: an answer from another node is refused.
        url: the peer's URL, for the refusal's message.
        encrypted: whether the transport is encrypted (recorded for status).
        certificate: the fingerprint of the link's TLS certificate (recorded for status).
        max_skew_ms: the skew window for received stamps, read at each page (settings may be
            reloaded while a link is open); by default the session's own window.
        logger: where the link's notes go (the serve log; the simulations keep theirs quiet).
    """

    def __init__(
        self,
        session: SyncSession,
        *,
        expected: NodeId | None = None,
        url: str | None = None,
        encrypted: bool = False,
        max_skew_ms: Callable[[], int] | None = None,
        certificate: str | None = None,
        logger: logging.Logger = log,
        snapshot_above: int = 1000,
    ) -> None:
        self.session = session
        self.snapshot_above = snapshot_above
        """A peer with an empty store gets a snapshot once the log holds more entries."""
        self.expected = expected
        self.url = url
        self.encrypted = encrypted
        self.certificate = certificate
        self.max_skew_ms = max_skew_ms or (lambda: session.local.max_skew_ms)
        self.result = LinkResult(peer=expected)
        self.holes = HoleRepair()
        self.peer_held_something = False
        """The peer's CaughtUp on this link named something it holds (storage/link/snapshot_link.py:
        a Vector naming nothing after that asks for everything)."""
        self.asked_whole: tuple[bytes, bytes] | None = None
        """The two row digests (ours, the peer's) when this link last asked the peer for
        everything, on finding rows that differ: it asks again only once they change (a
        snapshot that mended part of it, rows that arrived from a third device since), so a
        difference no snapshot mends (a forged entry) is asked about once."""
        """Origins whose log this node is taking again from the start (a hole was found)."""
        self.log = logger
        self.held_back: set[NodeId] = set()
        self.holding_back: set[NodeId] = set()
        """Origins the peer holds back from us (sync/held_back.py), each logged once per link."""

    def handle(self, conn: Connection, event: Event) -> Handled:
        """Answer ``event``; run it in a write transaction when :func:`writes` says so."""
        if isinstance(event, DeltasRequested | PageReceived) and self._unpaired():
            return Handled()
        if isinstance(event, Authenticated):
            return self._authenticated(conn, event)
        if isinstance(event, SNAPSHOT_EVENTS):
            return handle_snapshot_event(self, conn, event)
        if isinstance(event, DeltasRequested):
            if not answer_snapshot(self, conn, event):
                self._answer(conn, event)
        elif isinstance(event, PageReceived):
            return self._apply(conn, event)
        elif isinstance(event, PageAcked):
            self._acked(conn, event)
        elif isinstance(event, PeerCaughtUp):
            return self._caught_up(conn, event)
        elif isinstance(event, PeerPending) and self.result.peer is not None:
            peer_status.record_pending(conn, self.result.peer, event.entries)
        elif isinstance(event, Failed):
            self.record_failure(conn, event.code, event.message, unreachable=False)
        return Handled()

    def anti_entropy(self, conn: Connection) -> None:
        """Re-send our vector, so the peer re-checks what we lack; not while a repair runs.

        A Vector restarts the peer's stream from it, and ours claims the origin being repaired
        up to its newest stamp: sent now, it would end the re-sent stream early and the repair
        would fail as ``log_diverged`` (sync/holes.py). The repair ends with the peer's
        CaughtUp, which re-checks everything the Vector would have.
        """
        if not self.holes.busy:
            self.session.send_vector(delta_log.version_vector(conn))

    def record_failure(
        self, conn: Connection, code: str, message: str, *, unreachable: bool
    ) -> None:
        """Keep the failure as the link's result and in the peer's status (a write)."""
        self.result.error, self.result.error_code = message, code
        hello = self.session.offered
        local = self.session.local
        if (
            self.result.peer is None
            and hello is not None
            and local.is_paired(hello.node_id)
            and local.fingerprint(hello.public_key) == hello.node_id
        ):
            # Refused during the handshake (clock skew, schema): the Hello named a paired peer
            # with its key, so that peer's status shows the refusal. Unpaired ids record nothing.
            self.result.peer = hello.node_id
        if self.result.peer is not None:
            peer_status.record_error(
                conn, self.result.peer, message, local.now_ms(), unreachable=unreachable
            )

    def store_failed(self, message: str) -> None:
        """This node's database failed under the link (an event's transaction did not commit):
        refuse the link with ``storage_error`` (close code 1011), so the dialler reconnects.

        Frames the answer queued inside the transaction that rolled back (an ack, say) are
        dropped, never sent: the peer would take a page as held that this node does not hold.
        Only the Error goes out. Our own refusal is not answered as an event: the caller
        records it (:meth:`record_failure`, a write that may fail too) and logs it once.
        """
        self.session.frames_to_send()
        self.session.fail("storage_error", message, CLOSE_INTERNAL)
        self.session.events_received()
        if self.result.error is None:
            self.result.error, self.result.error_code = message, "storage_error"

    # -- one event each ------------------------------------------------------------------------

    def _unpaired(self) -> bool:
        """Refuse a peer unpaired since the handshake (settings reloaded): no more data moves."""
        peer, local = self.result.peer, self.session.local
        if peer is None or local.is_paired(peer):
            return False
        self.session.fail("not_paired", f"node {peer} is no longer paired with "
                          f"{local.node_id}", CLOSE_POLICY)  # fmt: skip
        return True

    def _authenticated(self, conn: Connection, event: Authenticated) -> Handled:
        if self.expected is not None and event.peer != self.expected:
            self.session.fail(
                "wrong_peer",
                f"{self.url} answered as {event.peer}, not the paired {self.expected}",
                CLOSE_POLICY,
            )
            return Handled()
        self.result.peer = event.peer
        self.result.authenticated = True
        peer_status.record_session(
            conn,
            event.peer,
            name=event.name,
            clock_offset_ms=event.clock_offset_ms,
            encrypted=self.encrypted,
            now_ms=self.session.local.now_ms(),
            certificate=self.certificate,
        )
        self.session.send_vector(delta_log.version_vector(conn))
        return Handled(authenticated=True)

    def _answer(self, conn: Connection, event: DeltasRequested) -> None:
        """Send what the peer asked for, or say it is caught up.

        A request stays open in the session until it is answered; one whose read failed and
        went unanswered would keep the link up and silent for good (it never asks again). So
        a failed read refuses the link with ``storage_error``, and the dialler reconnects.
        """
        try:
            pages, vector = delta_log.answer_request(conn, event.since, event.limit, event.ceiling)
        except (FeralError, DatabaseError) as exc:
            message = str(exc) if isinstance(exc, FeralError) else f"read failed: {exc}"
            self.session.fail("storage_error", message, CLOSE_INTERNAL)
            return
        told = holding_back_messages(conn, vector, event, self.session, self.result.peer)
        self._note_clock(conn, told, self.holding_back, record=False)
        if event.announce:
            self.session.send_pending(peer_status.backlog_for(conn, event.since))
        if pages:
            self.session.send_pages(pages)
        else:
            counts = delta_log.log_entry_counts(conn)
            self.session.send_caught_up(vector, counts, row_digest.row_digest(conn))

    def _apply(self, conn: Connection, event: PageReceived) -> Handled:
        """Merge the page and ack it, or refuse the link and roll the transaction back.

        The page is the first write of the event's transaction, so the rollback leaves nothing
        of it, not even half of its rows. No savepoint: under one, SQLite copies every page
        the merge touches to a sub-journal first (a temporary file past 64 KiB), which took
        about a fifth of the page apply's time in a catch-up.
        """
        page, peer = event.page, self.result.peer
        collided: list[Delta] = []
        try:
            applied = delta_log.apply_page(
                conn, page, now_ms=self.session.local.now_ms(), max_skew_ms=self.max_skew_ms(),
                peer=peer, checked=True, repair=self.holes.page(page.origin, page.after),
                collided=collided,
            )  # fmt: skip
        except (FeralError, DatabaseError) as exc:
            roll_back(conn)
            return Handled(refused=self._refuse_page(exc))
        self.session.ack(page)
        self.result.received += applied
        progress = None
        if peer is not None:
            if applied:
                peer_status.record_transfer(conn, peer, received=applied)
            progress = peer_status.record_incoming(conn, peer, len(page.deltas))
        return Handled(committed=True, applied=applied, collisions=len(collided),
                       progress=progress)  # fmt: skip

    def _refuse_page(self, exc: FeralError | DatabaseError) -> str:
        """Refuse the link for a page that could not be applied; returns the error code.

        The codes and close codes are the wire's (docs/PROTOCOL.md): a stamp beyond the window
        is policy, a malformed or gapped page a protocol error, anything else the store's.
        """
        if isinstance(exc, ClockSkewError):
            code, close_code = "clock_skew", CLOSE_POLICY
        elif isinstance(exc, ProtocolError):
            code, close_code = "protocol_error", CLOSE_PROTOCOL
        else:
            code, close_code = "storage_error", CLOSE_INTERNAL
        # A driver error gets the words run_write gives it, as when a page had its own write.
        message = str(exc) if isinstance(exc, FeralError) else f"write failed: {exc}"
        self.session.fail(code, message, close_code)
        return code

    def _acked(self, conn: Connection, event: PageAcked) -> None:
        self.result.sent += event.deltas
        if self.result.peer is not None:
            peer_status.record_ack(conn, self.result.peer, event.origin, event.hlc)
            peer_status.record_transfer(conn, self.result.peer, sent=event.deltas)

    def _caught_up(self, conn: Connection, event: PeerCaughtUp) -> Handled:
        """Record what the peer holds, then compare log entry counts where both sides hold an
        origin up to the same stamp (sync/holes.py).

        Fewer entries here means this copy of that origin's log has a hole (the database was
        restored from an older copy, or lost its log): ask the peer for the whole origin again
        and merge every entry. If a repair did not close the hole, stop rather than loop.
        """
        self.peer_held_something = self.peer_held_something or bool(event.vector)
        if self.result.peer is not None:
            peer_status.record_sync(conn, self.result.peer, event.vector,
                                    self.session.local.now_ms(), entries=event.entries,
                                    digest=event.digest)  # fmt: skip
        vector = delta_log.version_vector(conn)
        told = held_back_messages(conn, event.vector, vector, now_ms=self.session.local.now_ms(),
                                  window_ms=self.max_skew_ms(), peer=self.result.peer)  # fmt: skip
        self._note_clock(conn, told, self.held_back, record=True)
        entries = delta_log.log_entry_counts(conn)
        diverged = peer_status.diverged(
            vector, entries, row_digest.row_digest(conn), event.vector, event.entries, event.digest
        )
        self.result.diverged = diverged
        found = self.holes.check(vector, entries, event.vector, event.entries)
        if found.diverged:
            self.session.fail(
                "log_diverged",
                f"this node's log of {sorted(found.holes)} still differs from "
                f"{self.result.peer}'s after a repair",
                CLOSE_INTERNAL,
            )
            return Handled()
        if found.ask:
            self.session.send_vector(found.request(vector))
        elif diverged and self.asked_whole != (ours := (row_digest.row_digest(conn), event.digest)):
            # Rows differ at equal holdings: ask for everything, which the peer answers with a
            # snapshot (storage/link/snapshot_link.py; docs/REPLICATION.md §5, "Divergence").
            self.asked_whole = ours
            self.session.send_vector({})
        return Handled(holes=found.holes, diverged=diverged)

    def _note_clock(
        self, conn: Connection, told: dict[NodeId, str], seen: set[NodeId], *, record: bool
    ) -> None:
        """Name the origins held back on this link, like a refused page: in the link's result
        (what ``sync now`` says), the peer's status (when ``record``: a write) and, once per link
        and origin, the log. ``seen`` holds those named before; a result they set is cleared
        once none is left (they have all come since)."""
        if seen and not told and self.result.error_code == "clock_skew":
            self.result.error = self.result.error_code = None
        now = self.session.local.now_ms()
        for origin, message in told.items():
            self.result.error, self.result.error_code = message, "clock_skew"
            if record and self.result.peer is not None:
                peer_status.record_error(conn, self.result.peer, message, now, unreachable=False)
            if origin not in seen:
                self.log.warning("! link with %s: %s", self.result.peer, message)
        seen.clear()
        seen.update(told)
