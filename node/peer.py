"""One live link with one peer: a transport pumped through a sans-I/O session.

This is the thin asyncio layer over the sans-I/O session (websockets' ``asyncio/connection.py``
in spirit): read a frame, feed it to the session, act on its events against the node's store,
write the frames it produced. The server side and the client side differ only in how their
transport was opened, so both use :class:`PeerLink`.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from feral.storage import delta_log, peers as peer_status
from feral.sync.errors import ClockSkewError, FeralError, ProtocolError
from feral.sync.holes import HoleRepair
from feral.sync.ids import node_id_for
from feral.sync.session import (
    CLOSE_INTERNAL,
    CLOSE_POLICY,
    CLOSE_PROTOCOL,
    Authenticated,
    DeltasRequested,
    Event,
    Failed,
    LocalPeer,
    PageAcked,
    PageReceived,
    PeerCaughtUp,
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


@dataclass
class LinkResult:
    """How a link ended."""

    peer: NodeId | None = None
    received: int = 0
    sent: int = 0
    quiet: bool = False
    error: str | None = None
    error_code: str | None = None


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
        self.expected = expected
        self.url = url
        self.until_quiet = until_quiet
        self.progress = progress
        self.result = LinkResult(peer=expected)
        self._lock = asyncio.Lock()
        self._holes = HoleRepair()
        """Origins whose log this node is taking again from the start (a hole was found)."""
        self._peer_stopped_reading = False
        self.session = SyncSession(self._local_peer(), page_limit=1000)

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
                    self.session.receive_eof()
                    break
                async with self._lock:
                    self.session.receive_frame(data)
                    await self._handle_events()
                    await self._flush()
            await self._hang_up()
        except (OSError, asyncio.IncompleteReadError) as exc:
            await self._record_failure("connection_lost", f"connection lost: {exc}", True)
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
            self.session.send_vector(await self.node.version_vector())
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
        if isinstance(event, DeltasRequested | PageReceived) and self._unpaired():
            return
        if isinstance(event, Authenticated):
            await self._authenticated(event)
        elif isinstance(event, DeltasRequested):
            pages, vector = await self.node.answer_request(event.since, event.limit)
            if pages:
                self.session.send_pages(pages)
            else:
                entries = await self.node.store.read(delta_log.log_entry_counts)
                self.session.send_caught_up(vector, entries)
        elif isinstance(event, PageReceived):
            await self._apply(event)
        elif isinstance(event, PageAcked):
            await self._acked(event)
        elif isinstance(event, PeerCaughtUp):
            await self._record(peer_status.record_sync, event.vector, self.node.now_ms())
            await self._check_for_holes(event)
        elif isinstance(event, Failed):
            where = "peer refused" if event.remote else "refused peer"
            log.warning("! %s %s: %s", where, self.result.peer, event.message)
            await self._record_failure(event.code, event.message, False)

    def _unpaired(self) -> bool:
        """Refuse a peer unpaired since the handshake (settings reloaded): no more data moves."""
        peer = self.result.peer
        if peer is None or self.node.is_paired(peer):
            return False
        self.session.fail("not_paired", f"node {peer} is no longer paired with "
                          f"{self.node.node_id}", CLOSE_POLICY)  # fmt: skip
        return True

    async def _authenticated(self, event: Authenticated) -> None:
        if self.expected is not None and event.peer != self.expected:
            self.session.fail(
                "wrong_peer",
                f"{self.url} answered as {event.peer}, not the paired {self.expected}",
                CLOSE_POLICY,
            )
            return
        self.result.peer = event.peer
        log.info("= authenticated %s (%s)", event.peer, event.name)
        await self.node.store.write(
            peer_status.record_session,
            event.peer,
            name=event.name,
            clock_offset_ms=event.clock_offset_ms,
            encrypted=self.transport.encrypted,
            now_ms=self.node.now_ms(),
        )
        self.node.links[event.peer] = self
        self.session.send_vector(await self.node.version_vector())

    async def _check_for_holes(self, event: PeerCaughtUp) -> None:
        """Compare log entry counts where both sides hold an origin up to the same stamp.

        Fewer entries here means this copy of that origin's log has a hole (the database was
        restored from an older copy, or lost its log): ask the peer for the whole origin again
        and merge every entry. If a repair did not close the hole, stop rather than loop.
        """
        vector = await self.node.version_vector()
        entries = await self.node.store.read(delta_log.log_entry_counts)
        found = self._holes.check(vector, entries, event.vector, event.entries)
        if found.diverged:
            self.session.fail(
                "log_diverged",
                f"this node's log of {sorted(found.holes)} still differs from "
                f"{self.result.peer}'s after a repair",
                CLOSE_INTERNAL,
            )
        elif found.holes:
            log.warning("! log hole for %s: asking %s again", sorted(found.holes), self.result.peer)
            self.session.send_vector(found.request(vector))

    async def _apply(self, event: PageReceived) -> None:
        page = event.page
        try:
            applied = await self.node.apply_page(
                page, peer=self.result.peer, repair=page.origin in self._holes.repairing
            )
        except ClockSkewError as exc:
            self.session.fail("clock_skew", str(exc), CLOSE_POLICY)
            return
        except ProtocolError as exc:
            self.session.fail("protocol_error", str(exc), CLOSE_PROTOCOL)
            return
        except FeralError as exc:
            self.session.fail("storage_error", str(exc), CLOSE_INTERNAL)
            return
        self.session.ack(page)
        self.result.received += applied
        if applied:
            await self._record(peer_status.record_transfer, received=applied)
            self.node.notify_changed(exclude=self)
        if self.progress:
            self.progress(len(page.deltas))

    async def _acked(self, event: PageAcked) -> None:
        self.result.sent += event.deltas
        await self._record(peer_status.record_ack, event.origin, event.hlc)
        await self._record(peer_status.record_transfer, sent=event.deltas)

    async def _record(self, fn: Callable[..., None], *args: object, **kwargs: object) -> None:
        if self.result.peer is not None:
            await self.node.store.write(fn, self.result.peer, *args, **kwargs)

    async def _record_failure(self, code: str, message: str, unreachable: bool) -> None:
        self.result.error, self.result.error_code = message, code
        hello = self.session.offered
        if (
            self.result.peer is None
            and hello is not None
            and self.node.is_paired(hello.node_id)
            and node_id_for(hello.public_key) == hello.node_id
        ):
            # Refused during the handshake (clock skew, schema): the Hello named a paired peer
            # with its key, so that peer's status shows the refusal. Unpaired ids record nothing.
            self.result.peer = hello.node_id
        await self._record(
            peer_status.record_error, message, self.node.now_ms(), unreachable=unreachable
        )
