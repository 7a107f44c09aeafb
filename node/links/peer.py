"""One live link with one peer: a transport pumped through a sans-I/O session.

This is the thin asyncio layer over the sans-I/O session (websockets' ``asyncio/connection.py``
in spirit): read a frame, feed it to the session, have storage/link/handler.py's handler answer its
events against the node's store (the simulator drives the same handler), do what only a running
node does after them, write the frames the session produced; and time out, and close. The
server side and the client side differ only in how their transport was opened, so both use
:class:`PeerLink`.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable

from feral.node.home.identity import sign, verify
from feral.node.node_kernel import Link, NodeKernel
from feral.storage.link import peers as peer_status
from feral.storage.link.handler import FailureLog, Handled, LinkHandler, LinkResult, writes
from feral.sync.errors import FeralError
from feral.sync.ids import node_id_for
from feral.sync.invitation import JoinClaim
from feral.sync.session import (
    CLOSE_POLICY,
    Authenticated,
    Event,
    Failed,
    JoinOffered,
    LocalPeer,
    State,
)
from feral.sync.snapshot import SnapshotSession
from feral.sync.text import printable
from feral.sync.types import NodeId

from . import link_registry
from .invite import answer_join, is_join_refusal, join_refused, joins_expected
from .link_log import LinkReport, peer_label
from .transport import Transport

__all__ = [
    "NO_PROGRESS_TIMEOUT_S",
    "SEND_TIMEOUT_S",
    "FailureLog",
    "LinkResult",
    "PeerLink",
    "Transport",
]

log = logging.getLogger("feral.peer")

NO_PROGRESS_TIMEOUT_S = 30.0
"""A link that is mid-exchange and hears nothing for this long is closed (idle links live on
WebSocket pings)."""

SEND_TIMEOUT_S = NO_PROGRESS_TIMEOUT_S
"""A frame the peer has not taken off the socket within this long means it stopped reading: the
link is dropped rather than left waiting on a full buffer, holding its slot and its lock. What
waits meanwhile is bounded by the session's window of unacknowledged pages."""


class PeerLink:
    """Drive one session over one transport until it ends (or, for ``sync now``, is quiet).

    Args:
        node: the local node.
        transport: an open WebSocket.
        expected: the peer we dialled, if any; a different id is refused.
        url: the peer's URL, for status.
        until_quiet: end the link once both sides have caught up (one sync round).
        progress: called after each page applied with the catch-up's ``(received, total)``
            entries, the total being what the peer announced (messages.Pending).
        failures: where the serve log hears of the link's own failures (none for a CLI round,
            which reports its result instead).
        join: the invitation ``expected`` made, when joining it (node/links/invite.py); a link
            this node accepted may instead be a join of one of its own invitations.
        remote: the address an accepted link came from, for the serve log.
        admit: asked once the peer has authenticated: a reason to refuse it (``busy``, the
            server's link slots: node/links/link_guard.py), or ``None``.
        pace: awaited with each frame received (it may wait to slow the peer); a reason to
            refuse the link as ``rate_limited``, or ``None``.
    """

    def __init__(
        self,
        node: NodeKernel,
        transport: Transport,
        *,
        expected: NodeId | None = None,
        url: str | None = None,
        until_quiet: bool = False,
        progress: Callable[[int, int], None] | None = None,
        failures: FailureLog | None = None,
        join: JoinClaim | None = None,
        remote: str | None = None,
        admit: Callable[[Authenticated], str | None] | None = None,
        pace: Callable[[bytes], Awaitable[str | None]] | None = None,
    ) -> None:
        self.node = node
        self.join = join
        self._joins = False
        """A link this node accepted, while it has recent invitations (read as the link starts)."""
        self.remote = remote
        self.admit = admit
        self.pace = pace
        self._peer_name: str | None = None
        """The authenticated peer's name (escaped), for the serve log."""
        self._going_away = False
        self.failures = failures
        self.transport = transport
        self.until_quiet = until_quiet
        self._lock = asyncio.Lock()
        """Held while the session is fed or answered. The handler answers on the database
        thread (storage/link/handler.py), so this is what keeps every other task off the session
        meanwhile: a local commit's push, anti-entropy, a timeout, the end of the stream."""
        self._peer_stopped_reading = False
        self.link_id = secrets.token_hex(8)
        """This link's row in ``peer_links`` while it is up, read by ``sync status``."""
        self._linked = False
        self._reports = LinkReport(progress, serve_log=failures is not None)
        self.session = SnapshotSession(self._local_peer(), page_limit=1000)
        self.handler = LinkHandler(
            self.session,
            expected=expected,
            url=url,
            encrypted=transport.encrypted,
            max_skew_ms=lambda: node.settings.sync.max_clock_skew_ms,
            certificate=getattr(transport, "certificate", None),  # node/links/transport.py's
            snapshot_above=node.settings.sync.snapshot_above_entries,
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
            is_paired=self._is_paired,
            now_ms=node.now_ms,
            max_skew_ms=node.settings.sync.max_clock_skew_ms,
            nonce=secrets.token_bytes(32),
            join=self.join,
            accepts_joins=lambda: self._joins,
            schema_version=node.store.schema.version,
        )

    def _is_paired(self, peer: NodeId) -> bool:
        """Paired in settings, or the inviter this link is joining."""
        return self.node.is_paired(peer) or (self.join is not None and peer == self.join.inviter)

    async def run(self) -> LinkResult:
        """Pump frames until the link closes; never raises for the peer's misbehaviour."""
        try:
            if self.handler.expected is None:  # accepted: it may be a join (node/links/invite.py)
                self._joins = await joins_expected(self.node)
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
                if self.pace is not None and (refusal := await self.pace(data)):
                    async with self._lock:
                        self.session.fail("rate_limited", refusal, CLOSE_POLICY)
                        await self._handle_events()
                        await self._flush()
                    break
                if self._going_away:  # what the peer sent meanwhile is not taken
                    break
                async with self._lock:
                    self.session.receive_frame(data)
                    await self._handle_events()
                    await self._flush()
            await self._hang_up()
        except (OSError, asyncio.IncompleteReadError) as exc:
            await self._record(
                "connection_lost",
                f"connection lost: {exc}",
                unreachable=True,
            )
        except FeralError as exc:  # this node's database failed under the link
            await self._store_failed(exc)
        finally:
            await self._link_ended()
            self._unregister()
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

    async def expire_handshake(self, seconds: float) -> None:
        """Refuse a peer that has not authenticated within ``seconds`` as ``timeout`` and
        close (the server's handshake deadline, node/links/link_guard.py)."""
        async with self._lock:
            self.session.fail("timeout", f"no handshake within {seconds:g} s", CLOSE_POLICY)
            await self._handle_events()
            await self._flush()
        await self._hang_up()

    async def going_away(self) -> None:
        """This node is stopping: close with 1001 and take no more frames (a peer that queued
        thousands must not hold the shutdown while they are read)."""
        self._going_away = True
        await self.transport.close(1001, "the peer is stopping")

    async def local_changed(self) -> None:
        """A local commit happened: push it if the link is idle (live sync).

        Runs in a task of its own, so a failing database fails the link here: the link's own
        loop then ends, and whoever dialled reconnects.
        """
        try:
            async with self._lock:
                self.session.local_changed()
                await self._handle_events()
                await self._flush()
        except FeralError as exc:
            await self._store_failed(exc)
        if self.session.close_code is not None:  # refused meanwhile (e.g. unpaired): hang up
            await self._hang_up()

    async def anti_entropy(self) -> None:
        """Re-send our vector, so the peer re-checks what we lack."""
        try:
            async with self._lock:
                await self.node.store.read(self.handler.anti_entropy)
                await self._flush()
        except FeralError as exc:
            await self._store_failed(exc)
            await self._hang_up()

    async def _store_failed(self, exc: FeralError) -> None:
        """This node's database failed under the link: refuse it with ``storage_error`` (1011),
        say so once in the serve log, and record it in status if the database lets us.

        Frames an answer queued inside a transaction that did not commit (an ack, say) are
        dropped, never sent: only the Error goes out.
        """
        message = str(exc)
        async with self._lock:
            self.handler.store_failed(message)
            await self._flush()
        if self.failures is not None:
            self.failures.failed(self._who(), message)
        await self._record("storage_error", message, unreachable=False)

    async def _record(self, code: str, message: str, *, unreachable: bool) -> None:
        """Write a failure into status; a database failing again is the serve log's to tell
        (once, by :class:`FailureLog`), never a reason for the link to raise."""
        try:
            await self.node.store.write(
                self.handler.record_failure, code, message, unreachable=unreachable
            )
        except FeralError as exc:
            if self.failures is not None:
                self.failures.failed(self._who(), str(exc))

    async def _bookkeep(self, fn: Callable[..., None], *args: object) -> None:
        """A status write about the link itself: a refusal is the serve log's (once)."""
        try:
            await self.node.store.write(fn, *args)
        except FeralError as exc:
            if self.failures is not None:
                self.failures.failed(self._who(), str(exc))

    async def _link_ended(self) -> None:
        if self._linked and self.result.peer is not None:
            self._linked = False
            # The code only: the failure itself is logged once per streak (FailureLog).
            log.info("= link with %s closed: %s", self._named(),
                     self.result.error_code or "normally")  # fmt: skip
            await self._bookkeep(
                peer_status.record_link_down, self.link_id, self.result.peer, self.node.now_ms()
            )

    def _who(self) -> str:
        return self.result.peer or self.handler.url or "an unidentified peer"

    def _named(self) -> str:
        """The peer as the serve log names it (node/links/link_log.py)."""
        named = self._peer_name if self.result.peer is not None else None
        return peer_label(self.result.peer, named, self.session.offered,
                          self.remote or self.handler.url)  # fmt: skip

    # -- one live link per peer ----------------------------------------------------------------

    def _register(self, peer: NodeId) -> None:
        """Make this the link that pushes to ``peer`` (node/links/link_registry.py); a dialled link
        the rule says yields to the one the peer dialled steps aside."""
        yielding = link_registry.register(self.node, self, peer, _dialled)
        if self.failures is not None:
            self.failures.recovered(peer)
        for link in yielding:
            self.node.spawn(link.step_aside())

    def _unregister(self) -> None:
        """This link ended: a link on standby takes the pushes over
        (node/links/link_registry.py)."""
        link_registry.unregister(self.node, self, self.result.peer)

    async def step_aside(self) -> None:
        """Close this dialled link in favour of the one the peer dialled
        (node/links/link_registry.py)."""
        log.info("= %s: a link the peer dialled is up; closing ours", self.result.peer)
        await self.transport.close(1000, "a link with this peer is already up")

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
        """Answer one event on the database thread (storage/link/handler.py), then do what only the
        node does: register the link, log, embed what arrived and push it to the other links."""
        if isinstance(event, JoinOffered):
            await answer_join(self.node, self.session, event)
            return
        if isinstance(event, Failed) and is_join_refusal(event):
            join_refused(self.node, self.session, event)
        elif isinstance(event, Failed):
            self._reports.failed(event, self._named())
        if isinstance(event, Authenticated) and self.admit is not None:
            if refusal := self.admit(event):
                self.session.fail("busy", refusal, CLOSE_POLICY)
                return
        run = self.node.store.write if writes(event) else self.node.store.read
        handled: Handled = await run(self.handler.handle, event)
        if isinstance(event, Authenticated) and handled.authenticated:
            self._peer_name = printable(event.name)
            log.info("= authenticated %s", self._named())
            self._register(event.peer)
            self._linked = True
            await self._bookkeep(
                peer_status.record_link_up, self.link_id, event.peer, self.node.now_ms()
            )
        self._reports.handled(self.result.peer, event, handled)
        if handled.applied:
            await self.node.remote_applied(exclude=self)


def _dialled(link: Link) -> PeerLink | None:
    """``link`` if this node dialled it (the registry's question, node/links/link_registry.py)."""
    return link if isinstance(link, PeerLink) and link.handler.expected else None
