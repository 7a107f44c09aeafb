"""One peer link of the ``/sync`` protocol, without I/O (docs/PROTOCOL.md).

Written in the manner of python-websockets' ``protocol.py``: bytes go in with
:meth:`SyncSession.receive_frame`, frames to send come out of :meth:`frames_to_send`, and what
the node must do comes out of :meth:`events_received`. The session never touches storage: it
asks for deltas with :class:`DeltasRequested` and hands over pages with :class:`PageReceived`;
the node answers with :meth:`send_pages`, :meth:`send_caught_up`, :meth:`ack` or :meth:`fail`.
The node pumps a WebSocket through this class and the simulator pumps a simulated network
through the same class, so what the simulations prove is about this code. The frames themselves
(the link's state, decoding, error frames, refusing) are the base class's, in sync/framed_link.py;
``State`` and the close codes are imported from here too.

Flow (both sides run it at once, so one link syncs both directions):

1. Each side sends :class:`Hello` (id, key, schema, epoch, clock, nonce, protocol range).
2. On the other's Hello, each checks the id is the key's fingerprint, the peer is paired, a
   protocol version is common (sync/versions.py) and the clocks agree, then sends :class:`Auth`:
   its signature over both nonces and both ids. A replayed handshake fails, because the
   signature must cover the receiver's fresh nonce.
3. Once authenticated, each sends its :class:`Vector`. The other streams pages of what is
   missing, a few in flight at a time; each page is applied in one transaction and acked.
4. When nothing is missing the sender says :class:`CaughtUp`. The link stays open: a local
   commit (:meth:`local_changed`) streams again from the acked position (live sync).
"""

from __future__ import annotations

from . import held_back
from .codec import MAX_FRAME_BYTES, Message, encode_message
from .delta import Page
from .events import (
    Authenticated,
    DeltasRequested,
    Event,
    Failed,
    JoinOffered,
    PageAcked,
    PageReceived,
    PeerCaughtUp,
    PeerPending,
)
from .framed_link import (
    CLOSE_BAD_DATA,
    CLOSE_INTERNAL,
    CLOSE_POLICY,
    CLOSE_PROTOCOL,
    FramedLink,
    State,
)
from .handshake import LocalPeer, hello_of, refuse_hello, transcript
from .invitation import Join, JoinGate
from .messages import Ack, Auth, CaughtUp, Hello, Pending, Vector
from .round import MAX_PAGES_IN_FLIGHT, InFlight, Round
from .text import printable
from .types import NodeId, VersionVector
from .versions import Wire

__all__ = [
    "CLOSE_BAD_DATA",
    "CLOSE_INTERNAL",
    "CLOSE_POLICY",
    "CLOSE_PROTOCOL",
    "Authenticated",
    "DeltasRequested",
    "Event",
    "Failed",
    "MAX_PAGES_IN_FLIGHT",
    "JoinOffered",
    "LocalPeer",
    "PageAcked",
    "PageReceived",
    "PeerCaughtUp",
    "PeerPending",
    "State",
    "SyncSession",
]


class SyncSession(FramedLink):
    """The state of one link with one peer. See the module docstring for the flow.

    Args:
        local: this node's identity, trust decisions, clock and skew window.
        page_limit: the most deltas to ask the node for per page request.
    """

    def __init__(self, local: LocalPeer, page_limit: int = 1000) -> None:
        super().__init__(Wire(local.protocols))
        self.local = local
        self.page_limit = page_limit
        self.peer: Hello | None = None
        """The peer's Hello, once it passed every check."""
        self.offered: Hello | None = None
        """The peer's Hello as received, even one that was refused (for status and logs)."""
        self._gate: JoinGate | None = None
        """An unpaired peer's Hello passed: it must prove an invitation (Join, then Auth)."""
        self.peer_vector: VersionVector | None = None
        """What the peer holds, as far as its acks tell us (None until it sends its vector)."""
        self._sent: VersionVector = {}
        """Per origin, the newest stamp the peer holds or has on its way to it."""
        self._in_flight = InFlight()
        """Pages sent and not yet acked (sync/round.py)."""
        self._round = Round()
        """Where the round stands, both ways (sync/round.py)."""
        self._said: CaughtUp | None = None
        """Our last CaughtUp: what this node held when it last said it had sent everything."""
        self._heard: CaughtUp | None = None
        """The peer's last CaughtUp: what it held when it last said so."""
        self.peer_offset_ms: int | None = None
        """How far the peer's clock is from ours, measured at the handshake (sync/held_back.py)."""
        self._ceiling: int | None = None
        self._take_limit: int | None = None
        """The ceiling of our last request, and our limit when the peer's CaughtUp came."""
        self._send(hello_of(local))

    # -- outputs -------------------------------------------------------------------------------

    @property
    def quiet(self) -> bool:
        """Both directions have caught up, nothing is in flight, and both sides last said they
        hold the same: one sync round is done (docs/PROTOCOL.md §7).

        The last condition is what keeps a round open while a repair is pending on either side:
        a side whose copy has a hole says fewer entries than its peer until the repair is done.
        The row digest is left out of it: differing digests at equal holdings are divergence,
        which no further transfer mends; the node reports it (storage/link/handler.py).
        """
        done = self._round
        return (
            self.state is State.OPEN
            and done.said
            and done.heard
            and not self._in_flight
            and not done.requested
            and held_back.same_holdings(self._said, self._heard, self._ceiling, self._take_limit)
        )

    # -- inputs --------------------------------------------------------------------------------

    def _receive(self, message: Message) -> None:
        """A decoded message from the peer (:meth:`receive_frame`): the handshake's until the
        link opens, then the stream's."""
        if self.state is State.HANDSHAKE:
            self._receive_handshake(message)
        else:
            self._receive_open(message)

    # -- answers from the node -----------------------------------------------------------------

    def send_vector(self, vector: VersionVector) -> None:
        """Tell the peer what we hold, so it streams what we lack (also the anti-entropy call)."""
        if self.state is State.OPEN:
            self._round.vector_sent()
            self._send(Vector(dict(vector)))

    def send_pages(self, pages: list[Page]) -> None:
        """Send the pages a :class:`DeltasRequested` asked for (empty pages are skipped).

        At most :data:`MAX_PAGES_IN_FLIGHT` pages are unacked at once: pages beyond that are
        dropped here and asked for again when acks come back. A page whose frame would pass
        :data:`MAX_FRAME_BYTES` is split into pages that fit.
        """
        self._round.answered()
        for page in pages:
            if not page.deltas or self.state is not State.OPEN:
                continue
            if not self._send_page(page):
                break
        self._maybe_request()

    def send_caught_up(
        self,
        vector: VersionVector,
        entries: dict[NodeId, int] | None = None,
        digest: bytes = b"",
    ) -> None:
        """Answer a :class:`DeltasRequested` that found nothing to send.

        ``entries`` (log entries held per origin) lets the peer detect a hole in its copy, and
        ``digest`` (of the rows held) rows that differ at equal counts.
        """
        if not self._round.answered_nothing():  # it may have looked before a commit: again
            self._maybe_request()
            return
        if self.state is State.OPEN and not self._in_flight and not self._round.said:
            self._round.said_caught_up()
            self._said = CaughtUp(dict(vector), dict(entries or {}), digest)
            self._send(self._said)

    def send_pending(self, entries: int) -> None:
        """Tell the peer how many entries it lacks, before streaming them (``announce``)."""
        if self.state is State.OPEN:
            self._send(Pending(entries))

    def ack(self, page: Page) -> None:
        """The node committed ``page``: tell the peer.

        What this node holds changed, so its last CaughtUp is out of date: it says CaughtUp again
        once the peer's own CaughtUp shows the peer's stream has ended (:meth:`_receive_open`).
        """
        if self.state is State.OPEN:
            self._round.applied()
            self._send(Ack(page.origin, page.last_hlc))

    def local_changed(self) -> None:
        """Something committed locally: stream it if the link is idle (live sync)."""
        self._round.local_commit()
        self._maybe_request()

    def accept_join(self) -> None:
        """Answer :class:`JoinOffered`: the invitation was open and is now used, and the peer
        is paired here. Only now does this node prove itself to the joiner and open the link,
        so the joiner's link opening means it was accepted."""
        peer, local, gate = self.peer, self.local, self._gate
        if self.state is State.HANDSHAKE and gate is not None and gate.offered and peer:
            self._gate = None
            signed = transcript(local.node_id, peer.node_id, peer.nonce, local.nonce)
            self._send(Auth(local.sign(signed)))
            self._open(peer)

    # -- internals -----------------------------------------------------------------------------

    def _sent_through(self, vector: VersionVector) -> None:
        """The peer holds, or has on its way, everything up to ``vector``."""
        for origin, hlc in vector.items():
            self._sent[origin] = max(self._sent.get(origin, 0), hlc)

    def _send_page(self, page: Page) -> bool:
        """Send ``page``, halved until each frame fits; ``False`` once the window is full."""
        if self._in_flight.full:
            return False
        frame = encode_message(page, self._wire.send_tag)
        if len(frame) > MAX_FRAME_BYTES and len(page.deltas) > 1:
            half = len(page.deltas) // 2
            head = Page(page.origin, page.after, page.deltas[:half])
            tail = Page(page.origin, head.last_hlc, page.deltas[half:])
            return self._send_page(head) and self._send_page(tail)
        self._frames.append(frame)
        self._sent_through({page.origin: page.last_hlc})
        self._in_flight.push(page.origin, page.last_hlc, len(page.deltas))
        self._round.stream_moved()
        return True

    def _maybe_request(self) -> None:
        if not self._in_flight.full:
            self._request(self.page_limit)

    def _request(self, limit: int) -> None:
        if self.state is State.OPEN and self.peer_vector is not None and not self._round.requested:
            self._ceiling = held_back.send_ceiling(
                self.local.now_ms(), self.peer_offset_ms or 0, self.local.max_skew_ms
            )
            announce = self._round.announce
            self._round.request_opened()
            self._raise(DeltasRequested(dict(self._sent), limit, announce, self._ceiling))

    def _receive_caught_up(self, message: CaughtUp) -> None:
        """The peer has sent everything. If we applied its pages since our last CaughtUp, say
        CaughtUp again with what we hold now, so the peer can compare entry counts at the stamps
        it just sent (a hole shows only there) and knows when the round is over.

        Only a fresh CaughtUp is asked for (limit 0): our stream was complete, and what changed
        here came from the peer, which holds it.
        """
        say_again = self._round.caught_up_heard()
        self._heard = message
        self._take_limit = held_back.take_limit(self.local.now_ms(), self.local.max_skew_ms)
        self._raise(PeerCaughtUp(dict(message.vector), dict(message.entries), message.digest))
        if say_again:
            self._request(0)

    def _receive_handshake(self, message: Message) -> None:
        if self.peer is None and isinstance(message, Hello):
            self._receive_hello(message)
        elif self._gate is not None and self.peer is not None:
            refusal = self._gate.receive(message)
            if refusal is not None:
                self.fail(*refusal)
            elif isinstance(message, Auth):
                self._receive_auth(self.peer, message)
        elif self.peer is not None and isinstance(message, Join):
            pass  # already paired here: there is nothing to join, the invitation stays open
        elif self.peer is not None and isinstance(message, Auth):
            self._receive_auth(self.peer, message)
        else:
            self.fail("protocol_error", f"unexpected {type(message).__name__} in handshake",
                      CLOSE_PROTOCOL)  # fmt: skip

    def _receive_hello(self, hello: Hello) -> None:
        local = self.local
        self.offered, self._wire.peer_tag = hello, hello.protocol_low
        refusal = refuse_hello(self.local, hello)
        if refusal is not None:
            self.fail(refusal[0], refusal[1], CLOSE_POLICY)
            return
        self.peer, self._wire.agreed = hello, local.protocols.common(hello.protocols)
        if not local.is_paired(hello.node_id):  # it may join: its Join must come first
            self._gate = JoinGate(hello.node_id, local.node_id, local.nonce, hello.nonce,
                                  local.verify)  # fmt: skip
            return
        if local.join is not None:
            self._send(local.join.message(local.node_id, hello.nonce, local.nonce))
        signed = transcript(local.node_id, hello.node_id, hello.nonce, local.nonce)
        self._send(Auth(local.sign(signed)))

    def _receive_auth(self, peer: Hello, auth: Auth) -> None:
        local = self.local
        signed = transcript(peer.node_id, local.node_id, local.nonce, peer.nonce)
        if not local.verify(peer.public_key, signed, auth.signature):
            self.fail("auth_failed", "the peer's signature does not verify", CLOSE_POLICY)
            return
        if self._gate is not None:  # the node judges the invitation; accept_join opens
            self._events.append(self._gate.offer(printable(peer.name)))
            return
        self._open(peer)

    def _open(self, peer: Hello) -> None:
        local = self.local
        self.state = State.OPEN
        offset = self.peer_offset_ms = peer.wall_ms - local.now_ms()
        self._events.append(
            Authenticated(peer.node_id, printable(peer.name), printable(peer.epoch), offset)
        )

    def _receive_open(self, message: Message) -> None:
        if isinstance(message, Vector):
            self.peer_vector = dict(message.vector)
            self._sent = dict(message.vector)
            self._round.vector_heard()
            self._maybe_request()
        elif isinstance(message, Page):
            self._round.peer_streaming()
            self._raise(PageReceived(message))
        elif isinstance(message, Ack):
            self._receive_ack(message)
        elif isinstance(message, CaughtUp):
            self._receive_caught_up(message)
        elif isinstance(message, Pending):
            self._events.append(PeerPending(message.entries))
        else:
            self.fail("protocol_error", f"unexpected {type(message).__name__} after the "
                      "handshake (a replayed handshake?)", CLOSE_PROTOCOL)  # fmt: skip

    def _receive_ack(self, ack: Ack) -> None:
        deltas = None if self.peer_vector is None else self._in_flight.pop(ack.origin, ack.hlc)
        if deltas is None or self.peer_vector is None:
            self.fail("protocol_error", "an ack for a page that was not sent", CLOSE_PROTOCOL)
            return
        self.peer_vector[ack.origin] = max(self.peer_vector.get(ack.origin, 0), ack.hlc)
        self._events.append(PageAcked(ack.origin, ack.hlc, deltas))
        self._maybe_request()
