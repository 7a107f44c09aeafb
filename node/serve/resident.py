"""The resident node: ``remember`` and ``search`` answered by a process that stays between commands.

Started by a ``feral memory remember`` or ``search`` that found no server on its home and did
its work alone (cli/resident.py), it opens the node and the model once, warms both (the model's
session, the vectors held in memory), and answers the next commands' requests on the same two
routes as ``feral serve``'s API (node/api/routes.py), so their answers are the serve's, which
are the command's own (cli/serve_handoff.py). It is not a server for anyone else:

- It listens on 127.0.0.1 only, on a port the system picks, and every request needs the bearer
  token it made for itself and wrote, mode 0600, into ``HOME/resident.json`` (with the API's
  browser and Host checks besides: node/api/guard.py). Only the two routes are there.
- It dials no peer and accepts no link: sync is ``feral serve``'s. A fact remembered through it
  reaches peers as any command's does, when a serve or a ``sync now`` next runs.
- It does not take the serve lock, so every other command on the home works as it would with
  no resident: each embeds what it wrote, and a ``feral mcp`` embeds its own.

It stops by itself, removing its file first so that no command is sent to a port that is
closing, when it has answered nothing for its idle time; when its database changed under it
(its ``-wal`` deleted, the file replaced or written over: node/serve/database_watch.py); when a
``feral serve`` starts on the home (the serve answers from then on); when the home changes
under it (``settings.json`` or the key rewritten, the database replaced, the home removed),
since it would answer with what it read at start (commands compare the same mark, so none asks
it once the home changed); or when another feral is installed. SIGTERM and SIGINT stop it too.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from feral.node.api import MemoryApi
from feral.node.embedding import serve_running
from feral.node.home.resident_runtime import (
    ResidentRuntime,
    code_mark,
    forget_resident,
    home_mark,
    record_resident,
)
from feral.node.node import Node
from feral.storage.db.errors import StorageError

from .database_watch import watch_database
from .handoff_proof import ProvesHandoff
from .service import StoppingServer

__all__ = ["HANDED_PATHS", "ResidentService"]

log = logging.getLogger("feral.resident")

HANDED_PATHS = frozenset({"/api/memory/remember", "/api/memory/search"})
"""The routes a command hands over (cli/serve_handoff.py); the resident serves no others."""
WATCH_INTERVAL_S = 0.5
FINAL_DRAIN_S = 30.0
"""How long a stopping resident may spend embedding what is still queued."""


class _Activity:
    """ASGI wrapper that notes when the last request ended and how many are in flight."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.in_flight = 0
        self.last_active = time.monotonic()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1
            self.last_active = time.monotonic()

    def idle_for(self) -> float:
        return 0.0 if self.in_flight else time.monotonic() - self.last_active


class ResidentService:
    """Everything one resident runs for one node until it stops (see the module)."""

    def __init__(self, node: Node, idle_s: float, listener: socket.socket) -> None:
        """Serve ``node`` on ``listener`` (bound to 127.0.0.1), stopping after ``idle_s``."""
        self.node = node
        self.idle_s = idle_s
        self.listener = listener
        self.token = secrets.token_urlsafe(32)
        api = MemoryApi(node, token=self.token, loopback_only=True)
        routes = [r for r in api.routes() if isinstance(r, Route) and r.path in HANDED_PATHS]
        app = Starlette(routes=routes, middleware=api.middleware(),
                        exception_handlers=api.exception_handlers())  # fmt: skip
        self.activity = _Activity(app)
        self.mark = home_mark(node.home)
        self.code = code_mark()
        self.stopped_because: str | None = None
        self.database = watch_database(node.store.path, writable=node.store.read_only is None)
        node.store.write_check = self.database.problem if self.database is not None else None

    @property
    def runtime(self) -> ResidentRuntime:
        port = int(self.listener.getsockname()[1])
        return ResidentRuntime(os.getpid(), port, self.token, self.code, self.mark)

    async def run(self, started: Callable[[], None] | None = None) -> None:
        """Warm the model and the vectors, answer until a reason to stop, then embed what is
        still queued and remove the file."""
        await self._warm()
        self.node.embedding.start()
        app = ProvesHandoff(self.activity, self.token)  # commands check it is this process
        config = uvicorn.Config(app, lifespan="off", server_header=False, log_level="warning",
                                timeout_graceful_shutdown=5)  # fmt: skip
        server = StoppingServer(config)
        server.before_shutdown = self._stopping
        serving = asyncio.create_task(server.serve(sockets=[self.listener]))
        while not server.started and not serving.done():
            await asyncio.sleep(0.02)
        watcher: asyncio.Task[None] | None = None
        try:
            if server.started:
                record_resident(self.node.home, self.runtime)
                watcher = asyncio.create_task(self._watch(server))
                if started is not None:
                    started()
            await serving
        finally:
            forget_resident(self.node.home, os.getpid())
            if watcher is not None:
                watcher.cancel()
            await self.node.embedding.stop()
            await self._final_drain()

    async def _stopping(self) -> None:
        """On the way out, while the port is still this process's: no command is sent here
        from now on (a program may take the port once it is closed)."""
        forget_resident(self.node.home, os.getpid())

    async def _warm(self) -> None:
        """Load the model's session and the vectors now, so the first request is as quick as
        the next (a search would also note what it found as retrieved: not a warm-up's to do)."""
        if self.node.embedder is not None and self.node.embedding.active:
            await asyncio.to_thread(self.node.embedder.embed, ["warm up"])
        index = self.node.embedding.index
        if index is not None:
            await self.node.store.read(index.refresh)

    async def _watch(self, server: uvicorn.Server) -> None:
        while True:
            await asyncio.sleep(WATCH_INTERVAL_S)
            reason = self.reason_to_stop()
            if reason is not None:
                self.stopped_because = reason
                forget_resident(self.node.home, os.getpid())  # no command is sent here now
                server.should_exit = True
                return

    def reason_to_stop(self) -> str | None:
        """Why this resident should stop now, or ``None`` (see the module)."""
        problem = self.database.problem() if self.database is not None else None
        if problem is not None:  # it writes nothing more (node/serve/database_watch.py)
            self.node.store.read_only = StorageError(problem)
            return problem
        if self.activity.idle_for() >= self.idle_s:
            return f"idle for {self.idle_s:g} s"
        if serve_running(self.node.home):
            return "a feral serve runs on the home"
        if home_mark(self.node.home) != self.mark:
            return "the home changed (settings, key or database)"
        if code_mark() != self.code:
            return "another feral was installed"
        return None

    async def _final_drain(self) -> None:
        """Embed what is queued (this process's writes, if any are left), for a while."""
        if not self.node.embedding.active or not await self.node.embedding.pending():
            return
        try:
            async with asyncio.timeout(FINAL_DRAIN_S):
                await self.node.embedding.drain()
        except Exception as exc:  # the rows stay queued for the next command that drains
            log.warning("! embedding left for later: %s", exc)
