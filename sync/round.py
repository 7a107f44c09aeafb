"""Where one link's sync round stands: the session's catch-up state as one object.

A round (docs/PROTOCOL.md §7) is over when both sides have said ``CaughtUp``, nothing is in
flight, no request is open at the node, and the two ``CaughtUp`` messages name the same
holdings. The session used to keep that as six loose booleans written from many places (and
from its snapshot subclass); here each is a field of :class:`Round`, changed only by the named
transitions below, each of which is one event of the protocol. :class:`InFlight` is the window
of pages sent and not yet acknowledged, log pages and snapshot pages alike.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .types import NodeId

__all__ = ["MAX_PAGES_IN_FLIGHT", "InFlight", "Round"]

MAX_PAGES_IN_FLIGHT = 4


@dataclass
class Round:
    """The catch-up state of one link, both ways."""

    requested: bool = False
    """A request for deltas (or a snapshot) is open at the node: it has not answered yet."""
    stale: bool = False
    """A local commit came while a request was open: its answer may predate the commit."""
    announce: bool = False
    """The peer's Vector came: the next request also asks how much the peer lacks."""
    said: bool = False
    """Our last CaughtUp stands: nothing was sent since we said we had sent everything."""
    heard: bool = False
    """The peer's last CaughtUp stands: nothing came from it since."""
    applied_since_said: bool = False
    """A page from the peer was applied after our last CaughtUp, which is now out of date."""

    def request_opened(self) -> None:
        """The node was asked for what the peer lacks (the announce goes with the first)."""
        self.requested, self.announce = True, False

    def answered(self) -> None:
        """The node answered the open request with pages or a snapshot."""
        self.requested = self.stale = False

    def answered_nothing(self) -> bool:
        """The node found nothing to send; ``False`` if the answer may predate a local commit
        (then it must look again)."""
        stale, self.requested, self.stale = self.stale, False, False
        return not stale

    def local_commit(self) -> None:
        """Something committed here: our CaughtUp no longer stands."""
        self.said = False
        self.stale = self.requested

    def stream_moved(self) -> None:
        """A page or snapshot page went out: our CaughtUp no longer stands."""
        self.said = False

    def said_caught_up(self) -> None:
        self.said, self.applied_since_said = True, False

    def vector_heard(self) -> None:
        """The peer told us what it holds: stream again from there, announcing the backlog."""
        self.said, self.announce = False, True

    def vector_sent(self) -> None:
        """We told the peer what we hold: it streams again, and says CaughtUp afresh."""
        self.heard = False

    def peer_streaming(self) -> None:
        """A page came from the peer: its CaughtUp no longer stands until it says it again."""
        self.heard = False

    def applied(self) -> None:
        """We committed a page from the peer: what we hold changed since our CaughtUp."""
        self.applied_since_said = True

    def caught_up_heard(self) -> bool:
        """The peer said CaughtUp. Returns whether we must say CaughtUp again (we applied its
        pages since we last said so, and had said so)."""
        self.heard = True
        if self.applied_since_said and self.said:
            self.said = False
            return True
        return False


class InFlight:
    """Pages sent and not yet acknowledged, oldest first: ``(origin, last stamp or sequence,
    entries or rows)``. A snapshot page takes a slot like a log page, under no node's origin."""

    def __init__(self) -> None:
        self._pages: deque[tuple[NodeId, int, int]] = deque()

    def __len__(self) -> int:
        return len(self._pages)

    @property
    def full(self) -> bool:
        return len(self._pages) >= MAX_PAGES_IN_FLIGHT

    def push(self, origin: NodeId, mark: int, size: int) -> None:
        self._pages.append((origin, mark, size))

    def pop(self, origin: NodeId, mark: int) -> int | None:
        """Take the oldest page if the ack names it; its size, or ``None`` if it does not (an
        ack for a page that was not sent)."""
        if not self._pages or self._pages[0][:2] != (origin, mark):
            return None
        return self._pages.popleft()[2]
