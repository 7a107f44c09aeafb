"""A deterministic simulated network: connections of two FIFO directions, faults, clocks.

Nothing here is random: the state machine decides every delivery and every fault, so a
hypothesis seed replays the whole history.

What is faithful, and what is deliberately harsher than a WebSocket (DESIGN §5):

* A connection is one WebSocket: two directed FIFO queues of binary frames. :meth:`pop`
  delivers the oldest frame of one direction. Frames of *different* connections interleave in
  whatever order the machine picks, which is the reordering a real mesh has (a page relayed
  through a server can overtake or trail the origin's own page).
* A connection **reset** (``Cluster.reset``) loses everything queued in both
  directions and both sessions get ``receive_eof``: that is how TCP loses frames, and it is
  the faithful fault. A retransmission after a reset travels in a *new* session; that is the
  faithful form of duplication (the unacked pages are asked for again).
* A **partition** is a reset that also forbids reconnecting the pair until :meth:`heal`.
* :meth:`drop`, :meth:`duplicate` and :meth:`reorder` act *inside* one connection: they lose,
  repeat or swap a frame while the connection carries on. A WebSocket never does this (TCP
  retransmits, orders and deduplicates). They are kept as hostile-transport faults: the
  session must turn each into a refusal and a failed link (or a stalled link, which the
  no-progress timeout closes), never into a wrong database. The simulation checks exactly
  that; any divergence they caused would still be a finding, reported as hostile-only.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from feral.sync.types import NodeId

__all__ = ["EOF", "EPOCH_MS", "Connection", "Frame", "Link", "ManualClock", "SimNetwork", "SimTime"]

EPOCH_MS = 1_700_000_000_000
"""Where virtual time starts (November 2023)."""

Frame = bytes | None
"""A binary frame, or :data:`EOF` (the sender closed the connection after its last frame)."""

EOF: Frame = None

Link = tuple[NodeId, NodeId]
"""One direction of a connection: ``(sender, receiver)``."""


class SimTime:
    """Virtual time shared by the cluster; only the machine moves it, and only forward."""

    def __init__(self, now: int = EPOCH_MS) -> None:
        self.now = now

    def advance(self, ms: int) -> None:
        if ms < 0:
            raise ValueError("virtual time only moves forward; skew a node's clock instead")
        self.now += ms


class ManualClock:
    """One node's wall clock: shared virtual time plus this node's skew (which may be negative).

    Changing the skew moves this node's wall clock forward or back by hand, like a user or NTP
    setting the system clock (TEST-CATALOG 13, 14, 16).
    """

    def __init__(self, time: SimTime, skew_ms: int = 0) -> None:
        self.time = time
        self.skew_ms = skew_ms

    def __call__(self) -> int:
        return self.time.now + self.skew_ms


def pair_key(a: NodeId, b: NodeId) -> tuple[NodeId, NodeId]:
    """The unordered pair ``{a, b}`` as a sorted tuple."""
    return (a, b) if a <= b else (b, a)


@dataclass
class Connection:
    """One WebSocket between two nodes: a FIFO queue per direction."""

    ends: tuple[NodeId, NodeId]
    number: int
    queues: dict[Link, deque[Frame]] = field(default_factory=dict)
    tampered: bool = False
    """A hostile fault (drop, duplicate, reorder) acted on this connection."""

    def __post_init__(self) -> None:
        a, b = self.ends
        self.queues = {(a, b): deque(), (b, a): deque()}

    @property
    def idle(self) -> bool:
        return not any(self.queues.values())


class SimNetwork:
    """Every connection of the cluster, the partitions, and a count of frames moved."""

    def __init__(self) -> None:
        self.connections: dict[tuple[NodeId, NodeId], Connection] = {}
        self.partitioned: set[tuple[NodeId, NodeId]] = set()
        self.opened = 0
        self.frames_sent = 0
        self.frames_delivered = 0

    # -- connections ---------------------------------------------------------------------------

    def open(self, a: NodeId, b: NodeId) -> Connection:
        """Connect ``a`` and ``b`` (refused while they are partitioned or connected)."""
        key = pair_key(a, b)
        if key in self.partitioned or key in self.connections:
            raise ValueError(f"cannot connect {a} and {b} now")
        self.opened += 1
        connection = Connection((a, b), self.opened)
        self.connections[key] = connection
        return connection

    def connection(self, a: NodeId, b: NodeId) -> Connection | None:
        return self.connections.get(pair_key(a, b))

    def close(self, a: NodeId, b: NodeId) -> None:
        """Forget the connection and whatever was still queued on it."""
        self.connections.pop(pair_key(a, b), None)

    def partition(self, a: NodeId, b: NodeId) -> None:
        """Cut ``a`` from ``b`` until :meth:`heal` (the caller tears the sessions down)."""
        self.partitioned.add(pair_key(a, b))
        self.close(a, b)

    def heal(self, a: NodeId, b: NodeId) -> None:
        self.partitioned.discard(pair_key(a, b))

    def heal_all(self) -> None:
        self.partitioned.clear()

    # -- frames --------------------------------------------------------------------------------

    def send(self, link: Link, frames: list[Frame]) -> None:
        connection = self.connection(*link)
        if connection is None:
            return  # the connection is gone: frames written to a dead socket are lost
        connection.queues[link].extend(frames)
        self.frames_sent += len(frames)

    def busy_links(self) -> list[Link]:
        """Every direction with a frame waiting, in a stable order."""
        return sorted(
            link
            for _, connection in sorted(self.connections.items())
            for link, queue in connection.queues.items()
            if queue
        )

    def _queue(self, link: Link, *, tamper: bool = True) -> deque[Frame]:
        connection = self.connection(*link)
        if connection is None or not connection.queues[link]:
            raise ValueError(f"nothing is queued on {link}")
        connection.tampered |= tamper
        return connection.queues[link]

    def pop(self, link: Link) -> Frame:
        """Take the oldest frame of one direction, for delivery."""
        self.frames_delivered += 1
        return self._queue(link, tamper=False).popleft()

    def drop(self, link: Link) -> None:
        """Hostile: lose the oldest frame and carry on (a WebSocket cannot do this)."""
        queue = self._queue(link)
        if queue[0] is not EOF:
            queue.popleft()

    def duplicate(self, link: Link) -> None:
        """Hostile: deliver the oldest frame twice (a WebSocket cannot do this)."""
        queue = self._queue(link)
        if queue[0] is not EOF:
            queue.appendleft(queue[0])

    def reorder(self, link: Link) -> None:
        """Hostile: swap the two oldest frames (a WebSocket cannot do this)."""
        queue = self._queue(link)
        if len(queue) >= 2 and EOF not in (queue[0], queue[1]):
            queue[0], queue[1] = queue[1], queue[0]
