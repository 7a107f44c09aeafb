"""Snapshots: a peer whose holdings the log can no longer serve gets the rows instead
(docs/PROTOCOL.md §7, "Snapshots on the wire"; docs/REPLICATION.md §6; DESIGN §4).

A node prunes its log (storage/log/prune.py): entries every paired peer acknowledged and older than
the retention window go (tombstone rows stay). A peer that lacks some of those entries, because
it was silent longer than the window or its store is new or wiped, cannot be sent them any more,
so it is sent a **snapshot**: every row this node holds, tombstones included, with its clock,
in pages ordered by table and id. Every page carries the snapshot's vector and entry counts,
taken when it began, so it stands on its own:

* its rows merge as deltas do (a tombstone wins, sync/merge.py);
* a row the receiver holds that a page lacks stays: tombstone rows are never collected
  (storage/log/prune.py), so the sender's deletes travel in the snapshot, and a row it lacks is
  one it never held (the page's collected mark, from older versions, is ignored);
* the final page also moves the receiver's vector and counts up to the snapshot's, for the
  origins where it held less; below that it holds no log, so it serves a snapshot in turn.

The session here is :class:`SyncSession` with the snapshot's messages added, so the rest of the
flow (Vector, Pending, pages of the log above the snapshot, CaughtUp, quiet) is unchanged: a
snapshot page takes a slot in the same window of unacknowledged pages as a log page, and a
CaughtUp waits for its ack.
"""

from __future__ import annotations

from collections import deque

from .codec import Message
from .delta import Page
from .events import SnapshotAcked, SnapshotCursor, SnapshotReceived, SnapshotRequested
from .handshake import LocalPeer
from .hlc import COUNTER_BITS
from .messages import CaughtUp
from .session import CLOSE_PROTOCOL, State, SyncSession
from .snapshot_messages import MAX_SNAPSHOT_ROWS, SnapshotAck, SnapshotPage
from .types import NodeId, VersionVector

__all__ = [
    "BEYOND_THE_WINDOW",
    "MAX_SNAPSHOT_ROWS",
    "SnapshotAck",
    "SnapshotAcked",
    "SnapshotCursor",
    "SnapshotPage",
    "SnapshotReceived",
    "SnapshotRequested",
    "SnapshotSession",
]

BEYOND_THE_WINDOW = "a snapshot whose vector is stamped beyond twice the skew window ahead"
"""Why a snapshot is refused whose vector this clock cannot take yet (sent again later)."""

MAX_LICENSES = 16
"""Most Vectors a link remembers as unanswered by a snapshot (the oldest are forgotten: most
Vectors are answered by the log, and never spend theirs)."""

_SNAPSHOT = NodeId("")
"""The origin a snapshot page takes in the window of unacknowledged pages (no node's id)."""


class SnapshotSession(SyncSession):
    """A :class:`SyncSession` that can send and receive snapshots (module docstring).

    It keeps its own state (the snapshot being sent, the one being taken, the Vector a
    snapshot may answer) and moves the session's only through its named transitions: the
    round (``_round``, sync/round.py), the window of pages in flight, and what the peer holds.
    """

    def __init__(self, local: LocalPeer, page_limit: int = 1000) -> None:
        super().__init__(local, page_limit)
        self._cursor: SnapshotCursor | None = None
        """The snapshot being sent, or None."""
        self._snapshot_sent = 0
        self._snapshot_acked = 0
        self._unanswered: deque[VersionVector] = deque(maxlen=MAX_LICENSES)
        """Vectors sent, oldest first, that no snapshot has answered yet: each licenses one."""
        self._answering: VersionVector | None = None
        """The Vector the peer's last snapshot answered, while its stream is still in its
        snapshot part (no log page or CaughtUp since its final page): it may go on with a
        snapshot again (:meth:`_admit`)."""
        self._taking = False
        """A snapshot's pages are arriving (its first came, its final has not)."""

    def send_vector(self, vector: VersionVector) -> None:
        """Tell the peer what we hold; a snapshot may answer it (:meth:`_admit`)."""
        super().send_vector(vector)
        if self.state is State.OPEN:
            self._unanswered.append(dict(vector))

    @property
    def sending_snapshot(self) -> bool:
        return self._cursor is not None

    @property
    def expects_snapshot(self) -> bool:
        """Whether a snapshot may come now: one answering a Vector sent that no snapshot has
        answered yet, one going on from a snapshot just taken, or one whose pages are
        arriving."""
        return self._taking or bool(self._unanswered) or self._answering is not None

    def send_snapshot(self, pages: list[SnapshotPage]) -> None:
        """Send snapshot pages (the answer to a request the log could not serve, or to a
        :class:`SnapshotRequested`); after the final one the stream goes on from the
        snapshot's vector, with the log entries above it."""
        self._round.answered()
        for page in pages:
            if self.state is not State.OPEN or self._in_flight.full:
                break
            self._send(page)
            self._snapshot_sent += 1
            self._in_flight.push(_SNAPSHOT, self._snapshot_sent, len(page.rows))
            self._round.stream_moved()
            if page.final:
                self._cursor = None
                self._sent_through(page.vector)
            else:
                after = page.through if page.through is not None else ""
                table = page.table if page.through is not None else page.table + 1
                self._cursor = SnapshotCursor(page.vector, page.entries, table, after)
        self._maybe_request()

    def ack_snapshot(self, page: SnapshotPage) -> None:
        """The node committed snapshot ``page``: tell the peer."""
        if self.state is State.OPEN:
            self._round.applied()
            self._snapshot_acked += 1
            self._send(SnapshotAck(self._snapshot_acked))

    def _request(self, limit: int) -> None:
        if self._cursor is None or limit == 0:
            super()._request(limit)
        elif self.state is State.OPEN and not self._round.requested:
            self._round.request_opened()
            self._raise(SnapshotRequested(self._cursor, limit))

    def _admit(self, page: SnapshotPage) -> str | None:
        """Why ``page`` must be refused, or None; a first page taken spends its Vector.

        A snapshot is taken only as the answer to a Vector this node sent (one snapshot per
        Vector), and only when that Vector lacked some of what the snapshot holds: a page
        nobody asked for, from a paired peer, would raise this node's vector over entries it
        does not hold (docs/PROTOCOL.md §7).

        Vectors are queued, not just the last one remembered: a second Vector (anti-entropy, a
        repair's request) may leave before the snapshot answering the first arrives, and the
        peer answers that one too, with a second snapshot if its log still cannot serve it. The
        peer answers Vectors in the order they came, so a snapshot's first page spends the
        oldest Vector it answers and every older one.

        After a snapshot's final page the peer's stream goes on from the snapshot's vector, and
        may have to be a snapshot again: the peer's own floor rose meanwhile (it took a
        snapshot itself), so its log no longer serves what comes next. That snapshot still
        answers the same Vector, and is taken until the stream reaches a log page or
        CaughtUp. (A stream of log pages, or one that resumes after CaughtUp, that turns into
        a snapshot without a new Vector is refused: the link fails and the Vector its next
        connection sends licenses the snapshot; docs/PROTOCOL.md §7.)"""
        reach = (self.local.now_ms() + 2 * self.local.max_skew_ms) << COUNTER_BITS
        if any(hlc >= reach for hlc in page.vector.values()):
            return BEYOND_THE_WINDOW
        if self._taking:
            return None
        place = self._answered_vector(page)
        if place is not None:
            for _ in range(place):
                self._unanswered.popleft()
            self._answering = self._unanswered.popleft()
            return None
        if _lacks(self._answering, page):  # the stream answering it goes on with a snapshot
            return None
        if not self._unanswered and self._answering is None:
            return "a snapshot page this node did not ask for"
        return "a snapshot for a node that already holds everything it covers"

    def _answered_vector(self, page: SnapshotPage) -> int | None:
        """The place in the queue of the oldest Vector sent that lacked some of what ``page``'s
        snapshot covers, or None."""
        for place, asked in enumerate(self._unanswered):
            if _lacks(asked, page):
                return place
        return None

    def _receive_open(self, message: Message) -> None:
        if isinstance(message, SnapshotPage):
            refusal = self._admit(message)
            if refusal is not None:
                self.fail("unsolicited_snapshot", refusal, CLOSE_PROTOCOL)
                return
            self._taking = not message.final
            self._round.peer_streaming()
            self._raise(SnapshotReceived(message))
        elif isinstance(message, SnapshotAck):
            rows = self._in_flight.pop(_SNAPSHOT, message.seq)
            if rows is None:
                self.fail("protocol_error", "an ack for a snapshot page that was not sent",
                          CLOSE_PROTOCOL)  # fmt: skip
                return
            self._raise(SnapshotAcked(rows))
            self._maybe_request()
        else:
            if isinstance(message, Page | CaughtUp):
                self._answering = None  # the stream is past its snapshot part
            super()._receive_open(message)


def _lacks(asked: VersionVector | None, page: SnapshotPage) -> bool:
    """Whether a node that sent the Vector ``asked`` lacked some of what ``page``'s snapshot
    covers (False for no Vector)."""
    if asked is None:
        return False
    return not asked or any(hlc > asked.get(origin, 0) for origin, hlc in page.vector.items())
