"""What ``feral serve`` lets in: connections before and after they authenticate, and their pace.

A connection that has not proved a paired key yet costs little but is not a peer: it is counted
apart (``sync.max_unauthenticated``) and closed if it has not authenticated within
``sync.handshake_timeout_s``, or, if it never finished its HTTP request (a half-sent upgrade),
within the same delay. Only authenticated links take one of the server's peer slots (at most
:data:`~feral.node.serve.service.MAX_PEERS`), and one peer at most ``sync.max_links_per_peer`` of
them. A paired peer's frames are paced per peer over all its links (node/links/rate_limits.py):
slowed beyond ``sync.max_frames_per_s`` or ``sync.max_mib_per_min``, dropped as
``rate_limited`` when it keeps flooding. Every refusal is one line in the serve log.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from feral.node.settings.config import SyncSettings
from feral.sync.messages import Vector
from feral.sync.session import Authenticated
from feral.sync.text import printable
from feral.sync.types import NodeId

from .rate_limits import PeerPace

if TYPE_CHECKING:
    import uvicorn

    from .peer import PeerLink

__all__ = [
    "REQUEST_WATCH_S",
    "VECTOR_WEIGHT",
    "LinkGuard",
    "Ticket",
    "address_of",
    "REQUEST_TIMEOUT",
    "close_stalled_requests",
    "frame_weight",
]

log = logging.getLogger("feral.service")

REQUEST_WATCH_S = 0.5
"""How often open HTTP connections are checked for a request that never finished."""
VECTOR_WEIGHT = 50
"""A Vector asks the server to read what the peer lacks and send it (pages of up to 1,000
rows), where most frames cost it a few bytes of work: it counts as this many frames against
``sync.max_frames_per_s``, so a peer repeating Vectors is held back (at the default cap, to 4
a second) long before it keeps the database busy for the other peers. A peer sends one at the
handshake and one per anti-entropy round."""
MIB = 1024 * 1024


def address_of(client: object) -> str:
    """``host:port`` of a connection's peer address as uvicorn reports it, or ``unknown``."""
    if isinstance(client, tuple | list) and len(client) >= 2:
        host, port = client[0], client[1]
        return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"
    return "an unknown address"


@dataclass(eq=False)
class Ticket:
    """One accepted ``/sync`` connection, from its upgrade until it closes."""

    address: str
    peer: NodeId | None = None
    name: str = ""
    authenticated: asyncio.Event = field(default_factory=asyncio.Event)
    pace: PeerPace | None = None


class LinkGuard:
    """The server's counts of connections and links, and each paired peer's pace."""

    def __init__(self, settings: Callable[[], SyncSettings], max_peers: int) -> None:
        self.settings = settings
        """The node's current sync settings (read at each use: a reload takes effect)."""
        self.max_peers = max_peers
        self.pending = 0
        """Connections upgraded to ``/sync`` that have not authenticated yet."""
        self.links: dict[NodeId, int] = {}
        """Authenticated links open now, per peer."""
        self._paces: dict[NodeId, PeerPace] = {}

    @property
    def authenticated_links(self) -> int:
        return sum(self.links.values())

    def arrive(self, address: str) -> Ticket | None:
        """A connection asks for ``/sync``: its ticket, or ``None`` (refused, and logged)."""
        cap = self.settings().max_unauthenticated
        if self.pending >= cap:
            log.warning("! refused a connection from %s: %d unauthenticated connections are "
                        "open already (sync.max_unauthenticated)", address, cap)  # fmt: skip
            return None
        self.pending += 1
        return Ticket(address)

    def admit(self, ticket: Ticket, event: Authenticated) -> str | None:
        """The connection proved ``event.peer``'s key: take a slot, or say why not."""
        per_peer = self.settings().max_links_per_peer
        if self.authenticated_links >= self.max_peers:
            return f"too many peers connected ({self.max_peers} links are up)"
        if self.links.get(event.peer, 0) >= per_peer:
            return f"too many links from this peer ({per_peer} are up; sync.max_links_per_peer)"
        self.pending -= 1
        self.links[event.peer] = self.links.get(event.peer, 0) + 1
        ticket.peer, ticket.name = event.peer, printable(event.name)
        ticket.pace = self._pace_of(event.peer)
        ticket.authenticated.set()
        return None

    def leave(self, ticket: Ticket) -> None:
        """The connection closed: give back what it held."""
        if ticket.peer is None:
            self.pending -= 1
            return
        left = self.links.get(ticket.peer, 0) - 1
        if left > 0:
            self.links[ticket.peer] = left
        else:
            self.links.pop(ticket.peer, None)
            pace = self._paces.get(ticket.peer)
            if pace is not None and not pace.held:
                del self._paces[ticket.peer]  # a peer held back keeps its debt across redials

    def _pace_of(self, peer: NodeId) -> PeerPace:
        pace = self._paces.get(peer)
        if pace is None:
            sync = self.settings()
            pace = PeerPace(sync.max_frames_per_s, sync.max_mib_per_min * MIB, sync.flood_drop_s)
            self._paces[peer] = pace
        return pace

    async def pace(self, ticket: Ticket, frame: bytes) -> str | None:
        """Account one frame: wait if the peer is over its caps; the reason to drop it if it
        keeps flooding (the link then refuses it as ``rate_limited``)."""
        if ticket.pace is None:  # before authentication: the handshake deadline bounds it
            return None
        now = asyncio.get_running_loop().time()
        verdict = ticket.pace.admit(len(frame), now, frame_weight(frame))
        if verdict.drop:
            sync = self.settings()
            return (f"over {sync.max_frames_per_s} frames/s for {sync.flood_drop_s:g} s "
                    "(sync.max_frames_per_s)")  # fmt: skip
        if verdict.wait_s > 0:
            await asyncio.sleep(verdict.wait_s)
        return None

    async def run(self, link: PeerLink, ticket: Ticket) -> None:
        """Run ``link``; close it if it has not authenticated within the handshake deadline."""
        deadline = self.settings().handshake_timeout_s
        running = asyncio.ensure_future(link.run())
        waiting = asyncio.ensure_future(ticket.authenticated.wait())
        try:
            await asyncio.wait({running, waiting}, timeout=deadline,
                               return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        finally:
            waiting.cancel()
        if not running.done() and not ticket.authenticated.is_set():
            await link.expire_handshake(deadline)  # logged by the link, as every refusal
        await running


def frame_weight(frame: bytes) -> int:
    """How many frames ``frame`` counts as: :data:`VECTOR_WEIGHT` for a Vector, else 1.

    A frame is a msgpack array ``[protocol_version, kind, ...]`` (docs/PROTOCOL.md §1); with
    few fields it starts with a fixarray byte, then the version and the kind as fixints, so the
    kind is read without decoding the frame (the session decodes it after, and refuses it if
    it is malformed).
    """
    if len(frame) > 2 and 0x90 <= frame[0] <= 0x9F and frame[2] == Vector.KIND:
        return VECTOR_WEIGHT
    return 1


async def close_stalled_requests(server: uvicorn.Server, deadline: Callable[[], float]) -> None:
    """Close HTTP connections whose request has not fully arrived within ``deadline()``
    seconds: a head that never ends (a half-sent upgrade, a silent socket, the next request on
    a connection kept alive) is closed, a body that never ends is answered 408 and closed.
    uvicorn itself would wait for ever, and each such connection would hold a socket and a
    task of the server."""
    first_seen: weakref.WeakKeyDictionary[object, float] = weakref.WeakKeyDictionary()
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(REQUEST_WATCH_S)
        now, limit = loop.time(), deadline()
        for connection in list(server.server_state.connections):
            if not hasattr(connection, "cycle"):  # upgraded: the link's own deadline holds
                continue
            cycle = getattr(connection, "cycle", None)
            waiting_body = cycle is not None and _waits_for_body(cycle)
            answered = cycle is not None and bool(getattr(cycle, "response_complete", False))
            if cycle is not None and not (waiting_body or answered):
                continue  # being answered: the route's own time
            # Kept alive after an answer, a connection waits for its next head: uvicorn's
            # keep-alive timer stops at the first byte of it, this deadline does not.
            key = connection if cycle is None else cycle
            seen = first_seen.setdefault(key, now)
            if now - seen > limit:
                first_seen[key] = float("inf")  # said once; closing takes a moment
                _close_stalled(connection, limit, body=waiting_body)


def _waits_for_body(cycle: object) -> bool:
    """Whether a request's head arrived and its body has not, with no answer begun."""
    return bool(getattr(cycle, "more_body", False)) and not getattr(cycle, "response_started", True)


_TIMEOUT_BODY = b'{"error": {"code": "request_timeout", "message": "the body did not arrive"}}'
REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_TIMEOUT_BODY), _TIMEOUT_BODY)
)
"""The API's error shape (node/api/errors.py), written on the socket as the connection closes."""


def _close_stalled(connection: object, limit: float, *, body: bool) -> None:
    """Close ``connection``, whose request head (or body, answered 408 first) is late."""
    what = "request body" if body else "request"
    log.warning("! closed a connection from %s: no %s within %g s",
                address_of(getattr(connection, "client", None)), what, limit)  # fmt: skip
    transport = getattr(connection, "transport", None)
    if transport is None or transport.is_closing():
        return
    if body:
        transport.write(REQUEST_TIMEOUT)
    transport.close()
