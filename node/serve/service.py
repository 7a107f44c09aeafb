"""``feral serve`` and ``feral sync now``: the server, the dialers and one-shot sync rounds.

One server on the node's port serves ``/sync`` and the HTTP API (node/api/): a Starlette app under
uvicorn, whose WebSocket implementation is the websockets library. Peers with a URL are dialled
by websockets clients (node/links/dial.py) that reconnect with exponential backoff and jitter. Live
sync: every local commit, including one made by another process on the same home (seen through
SQLite's ``data_version``), is pushed to every connected peer.

Embedding runs in the background here (node/embedding.py), woken by local writes, merged pages and
other processes' commits; searches use the vectors held in memory (storage/vectors/vector_index.py).

Every task here is supervised: a link that fails for any reason (the peer, the network, this
node's own database refusing a write because another process holds its lock) ends that link
only; the failure is logged once (:class:`~feral.node.links.peer.FailureLog`) and recorded in status
where the database allows, and the dialler tries again with backoff. A dialler does not dial
while a link the peer dialled is up, so a pair keeps one link (docs/PROTOCOL.md §7).

What the server lets in, and how fast, is node/links/link_guard.py's: connections not yet
authenticated are counted apart from the peer slots and given a handshake deadline, and each
paired peer's frames are paced (docs/PROTOCOL.md §1, Connection limits).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import secrets
import signal
import socket
import ssl
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket

from feral.node.api import MemoryApi, is_loopback_host, load_or_create_api_token
from feral.node.curation.prune import prune_on_schedule
from feral.node.embedding import serving_lock
from feral.node.home.env_seconds import env_seconds
from feral.node.home.serve_runtime import forget_serve_runtime
from feral.node.links.dial import FRAME_LIMIT, dial, sync_url
from feral.node.links.link_guard import LinkGuard, address_of, close_stalled_requests
from feral.node.links.peer import FailureLog, LinkResult, PeerLink
from feral.node.links.tls import identity_fingerprint, server_context
from feral.node.links.transport import ServerTransport
from feral.node.mcp.mount import LazyMcp
from feral.node.node import Node
from feral.node.settings.config import PeerSettings, load_settings
from feral.storage.db.errors import StorageError
from feral.sync.backoff import reconnect_delays
from feral.sync.errors import FeralError
from feral.sync.types import NodeId

from .database_watch import DatabaseWatch, watch_database
from .handoff_proof import ProvesHandoff
from .listener import sole_server

__all__ = ["MAX_PEERS", "SyncService", "dial", "sync_url"]

log = logging.getLogger("feral.service")

MAX_PEERS = 8
"""Authenticated links the server holds at once (connections not yet authenticated are
counted apart: node/links/link_guard.py)."""
STOP_CLOSE_S = 5.0
"""How long a stopping server waits for its links to close."""
WATCH_INTERVAL_S = 0.25
ANTI_ENTROPY_S = 60.0
ANTI_ENTROPY_ENV = "FERAL_ANTI_ENTROPY_S"
ANTI_ENTROPY_MAX_S = 86_400.0


def anti_entropy_interval() -> float:
    """Seconds between anti-entropy vectors: :data:`ANTI_ENTROPY_S`, or ``$FERAL_ANTI_ENTROPY_S``.

    The variable exists so tests can make anti-entropy meet a long exchange (a repair) without
    waiting minutes; a user never needs it. The watcher wakes every :data:`WATCH_INTERVAL_S`,
    so shorter values act as that.

    Raises:
        ConfigError: the variable is not a positive number.
    """
    return env_seconds(
        ANTI_ENTROPY_ENV, ANTI_ENTROPY_S, least=0, most=ANTI_ENTROPY_MAX_S, zero=False
    )


class StoppingServer(uvicorn.Server):
    """uvicorn's server, stopped by SIGINT or SIGTERM without raising the signal again after
    its graceful shutdown: ``feral serve`` then closes its own links and exits 0 (uvicorn
    would re-raise it, and the process would end as ``Aborted!`` or killed by the signal).
    ``before_shutdown`` runs first when it stops: the node closes its links itself."""

    before_shutdown: Callable[[], Awaitable[None]] | None = None

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.before_shutdown is not None:
            await self.before_shutdown()
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


class SyncService:
    """Everything ``feral serve`` runs for one node until SIGINT or SIGTERM."""

    def __init__(
        self,
        node: Node,
        host: str,
        port: int,
        *,
        require_token: bool | None = None,
        api_token: str | None = None,
        tls: bool | None = None,
        listener: socket.socket | None = None,
    ) -> None:
        """Build the app; the API needs a token when ``require_token`` (by default: when
        ``host`` is not a loopback address), ``api_token`` or else ``<home>/api_token``.
        Everything is served over TLS when ``tls`` (by default: when not on loopback).
        ``listener`` is the socket to serve on, already bound (node/serve/listener.py); without it
        the server binds ``host``:``port`` itself.

        Raises:
            ConfigError: the token file is unusable (the message names it).
            HomeFileError: the certificate cannot be written (the message names it).
        """
        self.database: DatabaseWatch | None = None
        """Watched every :data:`WATCH_INTERVAL_S` while serving: it stops if that changes."""
        serve_tls = not is_loopback_host(host) if tls is None else tls
        self.tls = server_context(node.home, node.identity) if serve_tls else None
        self.certificate = identity_fingerprint(node.identity) if serve_tls else None
        """This node's certificate fingerprint when it serves TLS (node/links/tls.py)."""
        self.node = node
        self.host = host
        self.port = port
        self.listener = listener
        self.guard = LinkGuard(lambda: node.settings.sync, MAX_PEERS)
        self.anti_entropy_s = anti_entropy_interval()
        self.failures = FailureLog()
        self._dialers: dict[NodeId, asyncio.Task[None]] = {}
        if require_token is None:
            require_token = not is_loopback_host(host)
        self.api_token_created = False
        if require_token and api_token is None:
            api_token, self.api_token_created = load_or_create_api_token(node.home)
        self.api_token = api_token if require_token else None
        """The token the API asks for, or ``None`` when it asks for none (loopback)."""
        api = MemoryApi(node, token=self.api_token, loopback_only=not require_token)
        self.mcp = LazyMcp(node)  # /mcp, behind the API's guard (node/mcp/mount.py)
        self.app = Starlette(
            routes=[WebSocketRoute("/sync", self.sync_endpoint), *api.routes(), *self.mcp.routes],
            middleware=api.middleware(),
            exception_handlers=api.exception_handlers(),
        )
        self.server: uvicorn.Server | None = None
        self.nonce = secrets.token_hex(16)
        """This start's secret for ``HOME/serve.runtime.json``: commands check the port
        answers with it before they hand it anything (node/serve/handoff_proof.py)."""
        self.stopped_because: str | None = None
        """What happened to the database under this server, if that is why it stopped."""

    @property
    def server_links(self) -> int:
        """Authenticated links accepted and open now."""
        return self.guard.authenticated_links

    def config(self) -> uvicorn.Config:
        return _TlsConfig(
            self.tls,
            ProvesHandoff(self.app, self.nonce),
            host=self.host,
            port=self.port,
            ws="websockets-sansio",
            ws_max_size=FRAME_LIMIT,
            ws_ping_interval=20,
            ws_ping_timeout=20,
            ws_per_message_deflate=False,
            lifespan="off",
            server_header=False,
            log_level="warning",
            timeout_graceful_shutdown=5,
        )

    async def run(self, started: Callable[[], None] | None = None) -> None:
        """Serve until the process is told to stop; then close every link and the database.

        While it runs it holds the home's serve lock (CLI writes then leave their embedding
        queue to it), keeps the vectors in memory and embeds in the background.

        Raises:
            StorageError: the database changed under the server, which stopped for that.
        """
        with sole_server(self.node.home), serving_lock(self.node.home):
            self.node.embedding.start()
            try:
                async with self.mcp.running():
                    await self._serve(started)
            finally:
                await self.node.embedding.stop()
        if self.stopped_because is not None:
            raise StorageError(f"feral serve stopped: {self.stopped_because}")

    async def _serve(self, started: Callable[[], None] | None) -> None:
        store = self.node.store
        self.database = watch_database(store.path, writable=store.read_only is None)
        store.write_check = self.database.problem if self.database is not None else None
        self.server = server = StoppingServer(self.config())
        server.before_shutdown = self._stopping
        watcher = asyncio.create_task(self._watch())
        stalled = asyncio.create_task(
            close_stalled_requests(server, lambda: self.node.settings.sync.handshake_timeout_s)
        )
        pruning = asyncio.create_task(prune_on_schedule(self.node))  # storage/log/prune.py
        self._start_dialers()
        sockets = [self.listener] if self.listener is not None else None
        serving = asyncio.create_task(server.serve(sockets=sockets))
        while not self.server.started and not serving.done():
            await asyncio.sleep(0.02)
        if started is not None and self.server.started:
            started()
        try:
            await serving
        finally:
            watcher.cancel()
            stalled.cancel()
            pruning.cancel()
            await self._close_links()
            for task in self._dialers.values():
                task.cancel()
            await asyncio.gather(watcher, stalled, pruning, *self._dialers.values(),
                                 return_exceptions=True)  # fmt: skip

    async def _stopping(self) -> None:
        """First thing on the way out, while the port is still this server's: no command is
        sent here from now on (a program may take the port once it is closed), then the links."""
        forget_serve_runtime(self.node.home, os.getpid())
        await self._close_links()

    async def _close_links(self) -> None:
        """On the way out: close every link with a close frame (1001), so each peer hears the
        end at once rather than at its next ping, and frames still queued are not read."""
        links = [link for link in self.node.links.values() if isinstance(link, PeerLink)]
        links += [x for group in self.node.standby.values() for x in group
                  if isinstance(x, PeerLink)]  # fmt: skip
        if not links:
            return
        log.info("= stopping: closing %d link(s)", len(links))
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(STOP_CLOSE_S):
                await asyncio.gather(*(x.going_away() for x in links), return_exceptions=True)
                while any(x in self.node.links.values() for x in links):
                    await asyncio.sleep(0.05)

    async def sync_endpoint(self, websocket: WebSocket) -> None:
        """``/sync``: refuse browsers and too many unauthenticated connections before the
        upgrade, then run a link, which takes a peer slot once it authenticates."""
        address = address_of(websocket.client)
        if "origin" in websocket.headers:
            log.warning("! refused a connection from %s: a browser (Origin header)", address)
            await websocket.close(1008, "browsers may not connect to /sync")
            return
        ticket = self.guard.arrive(address)
        if ticket is None:
            await websocket.close(1008, "too many unauthenticated connections")
            return
        try:
            await websocket.accept()
            link = PeerLink(
                self.node, ServerTransport(websocket, certificate=self.certificate),
                failures=self.failures, remote=address,
                admit=lambda event: self.guard.admit(ticket, event),
                pace=lambda frame: self.guard.pace(ticket, frame),
            )  # fmt: skip
            await self.guard.run(link, ticket)
        except Exception as exc:  # a defect: this link only; the peer dials again
            self.failures.crashed(ticket.peer or "an accepted peer", exc)
        finally:
            self.guard.leave(ticket)

    def _start_dialers(self) -> None:
        wanted = {p.node_id: p for p in self.node.settings.sync.peers if p.url}
        for node_id in list(self._dialers):
            if node_id not in wanted:
                self._dialers.pop(node_id).cancel()
        for node_id, peer in wanted.items():
            if node_id not in self._dialers or self._dialers[node_id].done():
                self._dialers[node_id] = asyncio.create_task(self._dial_forever(peer))

    async def _dial_forever(self, peer: PeerSettings) -> None:
        """Keep a link with ``peer`` up: redial after any end, with backoff and jitter; not
        while a link the peer dialled is up (one link per pair)."""
        delays = reconnect_delays(random.random)
        while True:
            while peer.node_id in self.node.links:
                await asyncio.sleep(WATCH_INTERVAL_S)
            try:
                result = await dial(self.node, peer, until_quiet=False, failures=self.failures)
            except Exception as exc:  # a defect: say it once, and try again later
                self.failures.crashed(peer.node_id, exc)
                result = LinkResult(peer=peer.node_id, error=str(exc), error_code="internal")
            if result.error is None:
                delays = reconnect_delays(random.random)
            await asyncio.sleep(next(delays))

    async def _watch(self) -> None:
        """Push commits made by other processes, pick up settings changes, run anti-entropy."""
        version: int | None = None
        with contextlib.suppress(FeralError):  # failing now: the loop says so, once
            version = await self._data_version()
        settings_mtime = self._settings_mtime()
        elapsed = 0.0
        while True:
            await asyncio.sleep(WATCH_INTERVAL_S)
            elapsed += WATCH_INTERVAL_S
            if self._database_changed():
                return
            try:
                current = await self._data_version()
            except FeralError as exc:  # the database is failing: say so once, keep watching
                self.failures.failed("the database watch", str(exc))
                continue
            self.failures.recovered("the database watch")
            if current != version:  # (a spurious push after a failed read finds nothing)
                version = current
                self.node.notify_changed()
                self.node.embedding.wake()  # another process wrote: it left its queue to us
            mtime = self._settings_mtime()
            if mtime != settings_mtime:
                settings_mtime = mtime
                self._reload_settings()
            if elapsed >= self.anti_entropy_s:
                elapsed = 0.0
                for link in list(self.node.links.values()):
                    if isinstance(link, PeerLink):
                        await link.anti_entropy()

    def _database_changed(self) -> bool:
        """Whether the database changed under this server (node/serve/database_watch.py): then it
        writes nothing more and stops, and ``feral serve`` says why in one line."""
        problem = self.database.problem() if self.database is not None else None
        if problem is None:
            return False
        self.stopped_because = problem
        self.node.store.read_only = StorageError(problem)
        if self.server is not None:
            self.server.should_exit = True
        return True

    async def _data_version(self) -> int:
        return int(
            await self.node.store.read(lambda c: c.execute("PRAGMA data_version").fetchone()[0])
        )

    def _settings_mtime(self) -> float:
        with contextlib.suppress(OSError):
            return (self.node.home / "settings.json").stat().st_mtime
        return 0.0

    def _reload_settings(self) -> None:
        try:
            self.node.settings = load_settings(self.node.home)
        except Exception as exc:  # a half-written or broken file: keep the old settings
            log.warning("! settings not reloaded: %s", exc)
            return
        self._start_dialers()


class _TlsConfig(uvicorn.Config):
    """uvicorn's config serving with node/links/tls.py's context (TLS 1.3 only, the node's own
    certificate) instead of one uvicorn builds from file names, when ``tls`` is given."""

    def __init__(self, tls: ssl.SSLContext | None, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tls = tls

    def load(self) -> None:
        super().load()
        if self.tls is not None:
            self.ssl = self.tls
