"""``/mcp`` on ``feral serve``: the MCP server (node/mcp/server.py), started on its first request.

The ``mcp`` SDK costs more than a second of CPU to import (pydantic and its models), which every
``feral serve`` would pay at start, used or not; so the route holds this small ASGI app, which
imports the SDK, builds the server and starts its session manager when a client first calls.
The session manager runs in a task of its own, entered and left there (the SDK's task groups
must be left by the task that entered them), until the server stops.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

if TYPE_CHECKING:
    from feral.node.node import Node

    from .server import McpHttp

__all__ = ["LazyMcp"]


class LazyMcp:
    """The ASGI app of ``/mcp``; the API's guard, which wraps the whole app, runs before it."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self._app: ASGIApp | None = None
        self._lock = asyncio.Lock()
        self._stopping = asyncio.Event()
        self._holder: asyncio.Task[None] | None = None

    @property
    def routes(self) -> list[BaseRoute]:
        return [Route("/mcp", endpoint=self)]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self._app or await self._start()
        await app(scope, receive, send)

    async def _start(self) -> ASGIApp:
        async with self._lock:
            if self._app is None:
                from .server import McpHttp

                mcp = McpHttp(self.node)
                ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                self._holder = asyncio.create_task(self._hold(mcp, ready))
                await ready  # the holder's failure, if it fails to start, is raised here
                self._app = mcp.app
            return self._app

    async def _hold(self, mcp: McpHttp, ready: asyncio.Future[None]) -> None:
        try:
            async with mcp.running():
                ready.set_result(None)
                await self._stopping.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """While ``feral serve`` serves; on the way out the session manager, if started, stops."""
        try:
            yield
        finally:
            self._stopping.set()
            if self._holder is not None:
                await asyncio.gather(self._holder, return_exceptions=True)
