"""One live link with one peer: a transport pumped through a sans-I/O session.

This is the thin asyncio layer over the sans-I/O session (websockets' ``asyncio/connection.py``
in spirit): read a frame, feed it to the session, have storage/link.py's handler answer its
events against the node's store (the simulator drives the same handler), do what only a running
node does after them, write the frames the session produced; and time out, and close. The
server side and the client side differ only in how their transport was opened, so both use
:class:`PeerLink`.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from typing import Protocol

from feral.storage.link import Handled, LinkHandler, LinkResult, writes
from feral.sync.ids import node_id_for
from feral.sync.session import (
    CLOSE_POLICY,
    Authenticated,
    Event,
    Failed,
    LocalPeer,
    PageReceived,
    State,
    SyncSession,
)
from feral.sync.types import NodeId

from .identity import sign, verify
from .node import Node

__all__ = ["NO_PROGRESS_TIMEOUT_S", "SEND_TIMEOUT_S", "LinkResult", "PeerLink", "Transport"]

log = logging.getLogger("feral.peer")

NO_PROGRESS_TIMEOUT_S = 30.0
"""A link that is mid-exchange and hears nothing for this long is closed (idle links live on
WebSocket pings)."""

SEND_TIMEOUT_S = NO_PROGRESS_TIMEOUT_S
"""A frame the peer has not taken off the socket within this long means it stopped reading: the
link is dropped rather than left waiting on a full buffer, holding its slot and its lock. What
waits meanwhile is bounded by the session's window of unacknowledged pages."""


class Transport(Protocol):
    """A message-oriented, ordered connection (a WebSocket)."""

    encrypted: bool

    async def recv(self) -> bytes | None:
        """The next binary frame, or ``None`` once the connection has ended."""

    async def send(self, data: bytes) -> None: ...

    async def close(self, code: int, reason: str) -> None: ...


class PeerLink:
    """Drive one session over one transport until it ends (or, for ``sync now``, is quiet).

    Args:
        node: the local node.
        transport: an open WebSocket.
        expected: the peer we dialled, if any; a different id is refused.
        url: the peer's URL, for status.
        until_quiet: end the link once both sides have caught up (one sync round).
        progress: called with the number of rows in each page applied.
    """

    def __init__(
        self,
        node: Node,
        transport: Transport,
        *,
        expected: NodeId | None = None,
        url: str | None = None,
        until_quiet: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self.node = node
        self.transport = transport
        self.until_quiet = until_quiet
        self.progress = progress
        self._lock = asyncio.Lock()
        """Held while the session is fed or answered. The handler answers on the database
        thread (storage/link.py), so this is what keeps every other task off the session
        meanwhile: a local commit's push, anti-entropy, a timeout, the end of the stream."""
        self._peer_stopped_reading = False
        self.session = SyncSession(self._local_peer(), page_limit=1000)
        self.handler = LinkHandler(
            self.session,
            expected=expected,
            url=url,
            encrypted=transport.encrypted,
            max_skew_ms=lambda: node.settings.sync.max_clock_skew_ms,
        )

    @property
    def result(self) -> LinkResult:
        """How the link went (the handler keeps it; it is final once :meth:`run` returns)."""
        return self.handler.result

    def _local_peer(self) -> LocalPeer:
        node = self.node
        identity = node.identity
        return LocalPeer(
            node_id=identity.node_id,
            public_key=identity.public_key,
            name=node.settings.name,
            epoch=node.epoch,
            sign=lambda data: sign(identity, data),
            verify=verify,
            fingerprint=node_id_for,
            is_paired=node.is_paired,
            now_ms=node.now_ms,
            max_skew_ms=node.settings.sync.max_clock_skew_ms,
            nonce=secrets.token_bytes(32),
        )

    async def run(self) -> LinkResult:
        """Pump frames until the link closes; never raises for the peer's misbehaviour."""
        try:
            await self._flush()
            while self.session.state < State.CLOSING:
                if self.until_quiet and self.session.quiet:
                    await self.transport.close(1000, "sync round complete")
                    break
                data = await self._receive()
                if data is None:
                    async with self._lock:
                        self.session.receive_eof()
                    break
                async with self._lock:
                    self.session.receive_frame(data)
                    await self._handle_events()
                    await self._flush()
            await self._hang_up()
        except (OSError, asyncio.IncompleteReadError) as exc:
            await self.node.store.write(
                self.handler.record_failure,
                "connection_lost",
                f"connection lost: {exc}",
                unreachable=True,
            )
        self.result.quiet = self.result.quiet or self.session.quiet
        return self.result

    async def _receive(self) -> bytes | None:
        busy = not self.session.quiet or self.until_quiet
        try:
            return await asyncio.wait_for(
                self.transport.recv(), NO_PROGRESS_TIMEOUT_S if busy else None
            )
        except TimeoutError:
            async with self._lock:
                self.session.fail("timeout", "no progress for 30 s", CLOSE_POLICY)
                await self._handle_events()
                await self._flush()
            return None

    async def local_changed(self) -> None:
        """A local commit happened: push it if the link is idle (live sync)."""
        async with self._lock:
            self.session.local_changed()
            await self._handle_events()
            await self._flush()
        if self.session.close_code is not None:  # refused meanwhile (e.g. unpaired): hang up
            await self._hang_up()

    async def anti_entropy(self) -> None:
        """Re-send our vector, so the peer re-checks what we lack."""
        async with self._lock:
            await self.node.store.read(self.handler.anti_entropy)
            await self._flush()

    async def _hang_up(self) -> None:
        """Close with the session's code, or normally (1000) when the peer ended the link.

        A peer that stopped reading gets no close frame: it would wait on the same full buffer.
        """
        if self._peer_stopped_reading:
            return
        code = self.session.close_code or 1000
        try:
            async with asyncio.timeout(SEND_TIMEOUT_S):
                await self.transport.close(code, self.result.error or "")
        except TimeoutError:
            log.warning("! %s took no close frame in %.0f s", self.result.peer, SEND_TIMEOUT_S)

    async def _flush(self) -> None:
        for frame in self.session.frames_to_send():
            try:
                async with asyncio.timeout(SEND_TIMEOUT_S):
                    await self.transport.send(frame)
            except TimeoutError:
                await self._stopped_reading()
                return

    async def _stopped_reading(self) -> None:
        """Give up on a peer that took nothing for :data:`SEND_TIMEOUT_S`; write nothing more."""
        self._peer_stopped_reading = True
        self.session.fail("timeout", f"the peer read nothing for {SEND_TIMEOUT_S:.0f} s",
                          CLOSE_POLICY)  # fmt: skip
        self.session.frames_to_send()  # the error frame would wait behind the rest
        await self._handle_events()

    async def _handle_events(self) -> None:
        # Answering an event can produce more events (e.g. an ack frees a page slot).
        while events := self.session.events_received():
            for event in events:
                await self._handle(event)

    async def _handle(self, event: Event) -> None:
        """Answer one event on the database thread (storage/link.py), then do what only the
        node does: register the link, log, embed what arrived and push it to the other links."""
        if isinstance(event, Failed):
            where = "peer refused" if event.remote else "refused peer"
            log.warning("! %s %s: %s", where, self.result.peer, event.message)
        run = self.node.store.write if writes(event) else self.node.store.read
        handled: Handled = await run(self.handler.handle, event)
        if isinstance(event, Authenticated) and handled.authenticated:
            log.info("= authenticated %s (%s)", event.peer, event.name)
            self.node.links[event.peer] = self
        if handled.holes:
            log.warning(
                "! log hole for %s: asking %s again", sorted(handled.holes), self.result.peer
            )
        if handled.collisions and isinstance(event, PageReceived):
            log.warning(
                "! integrity alarm: %s sent %d entries of %s at stamps this node holds with "
                "other content; kept ours (see feral sync status)",
                self.result.peer, handled.collisions, event.page.origin,
            )  # fmt: skip
        if handled.applied:
            await self.node.remote_applied(exclude=self)
        if isinstance(event, PageReceived) and handled.committed and self.progress:
            self.progress(len(event.page.deltas))
