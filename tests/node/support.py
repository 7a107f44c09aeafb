"""Helpers for the node tests: homes paired through settings.json, services on free loopback
ports, manual clocks, bounded polling and the convergence oracle.

Nothing here is faked: every node is a real :class:`feral.node.node.Node` on a real SQLite file in
``tmp_path``, and every link is a real WebSocket over 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from feral.node.home.identity import load_or_create_identity
from feral.node.links.status import sync_status
from feral.node.node import Node
from feral.node.node_kernel import wall_clock_ms
from feral.node.serve.service import SyncService
from feral.node.settings.config import PeerSettings, load_settings, save_settings, with_peer
from feral.storage.encoders.embedders import NO_EMBEDDER
from feral.storage.log import delta_log
from feral.sync.delta import Page
from feral.sync.types import NodeId

__all__ = [
    "apply_page",
    "HOST",
    "HOUR",
    "MINUTE",
    "MS",
    "SECOND",
    "WAIT_S",
    "ManualClock",
    "Mesh",
    "RecordingLink",
    "assert_converged",
    "free_port",
    "now_ms",
    "pair",
    "peer_row",
    "serving",
    "turn_off_embeddings",
    "wait_until",
]

MS = 1
SECOND = 1000 * MS
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

HOST = "127.0.0.1"
WAIT_S = 10.0
"""The longest any test waits for something to happen over a link."""


def now_ms() -> int:
    """The real wall clock, as nodes read it."""
    return wall_clock_ms()()


class ManualClock:
    """A wall clock that moves only when told to (in ``MS``)."""

    def __init__(self, start: int) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> int:
        self.now += ms
        return self.now


class RecordingLink:
    """Stands in for a live peer link: records every ``local_changed`` call."""

    def __init__(self) -> None:
        self.calls = 0

    async def local_changed(self) -> None:
        self.calls += 1


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def pair(home: Path, *peers: PeerSettings) -> None:
    """Add ``peers`` to the settings.json in ``home`` (as ``feral sync peers add`` does)."""
    settings = load_settings(home)
    for peer in peers:
        settings = with_peer(settings, peer)
    save_settings(home, settings)


def turn_off_embeddings(home: Path) -> None:
    """Set ``memory.embedder`` to ``"none"`` in ``home``: its node opens with no vector leg."""
    settings = load_settings(home)
    memory = dataclasses.replace(settings.memory, embedder="none")
    save_settings(home, dataclasses.replace(settings, memory=memory))


async def wait_until(
    predicate: Callable[[], bool | Awaitable[bool]],
    what: str,
    timeout: float = WAIT_S,
    interval: float = 0.02,
) -> None:
    """Poll ``predicate`` (sync or async) until it holds; fail naming ``what`` after ``timeout``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        outcome = predicate()
        if inspect.isawaitable(outcome):
            outcome = await outcome
        if outcome:
            return
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(interval)


@contextlib.asynccontextmanager
async def serving(node: Node, port: int) -> AsyncIterator[SyncService]:
    """Run ``feral serve`` for ``node`` on ``port`` as a task; always stop it on the way out."""
    service = SyncService(node, HOST, port)
    ready = asyncio.Event()
    task = asyncio.create_task(service.run(ready.set))
    started = asyncio.create_task(ready.wait())
    try:
        await asyncio.wait({task, started}, timeout=WAIT_S, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            task.result()  # raises why the server could not start
        assert ready.is_set(), f"the service on port {port} did not start"
        yield service
    finally:
        started.cancel()
        if service.server is not None:
            service.server.should_exit = True
        await asyncio.wait_for(task, WAIT_S)


class Mesh:
    """Named homes under one directory, with a port each; closes every node it opened."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ids: dict[str, NodeId] = {}
        self.ports: dict[str, int] = {}
        self._opened: list[Node] = []

    def add(self, *names: str) -> list[NodeId]:
        """Create each home and its key (as ``feral init`` does) and reserve it a port.

        Vector search is off (``memory.embedder`` is ``"none"``): these tests are about
        replication, and a test that wants vectors passes its own embedder to :meth:`open`.
        """
        for name in names:
            home = self.home(name)
            self.ids[name] = load_or_create_identity(home).node_id
            self.ports[name] = free_port()
            settings = load_settings(home)
            memory = replace(settings.memory, embedder=NO_EMBEDDER)
            save_settings(home, replace(settings, memory=memory))
        return [self.ids[name] for name in names]

    def home(self, name: str) -> Path:
        return self.root / name

    def url(self, name: str) -> str:
        return f"ws://{HOST}:{self.ports[name]}"

    def peer(self, name: str, *, dial: bool = True) -> PeerSettings:
        """``name`` as a peer entry: with its URL, or accept-only when ``dial`` is false."""
        return PeerSettings(self.ids[name], self.url(name) if dial else None)

    def pair(self, name: str, *peers: PeerSettings) -> None:
        pair(self.home(name), *peers)

    async def open(self, name: str, **kwargs: Any) -> Node:
        node = await Node.open(self.home(name), **kwargs)
        self._opened.append(node)
        return node

    def serve(self, node: Node, name: str) -> contextlib.AbstractAsyncContextManager[SyncService]:
        return serving(node, self.ports[name])

    async def aclose(self) -> None:
        for node in reversed(self._opened):
            await node.close()


async def peer_row(node: Node, peer: NodeId) -> dict[str, Any]:
    """The ``sync status`` row ``node`` shows for ``peer``."""
    status = await sync_status(node)
    rows = [row for row in status["peers"] if row["node_id"] == peer]
    assert len(rows) == 1, status
    row: dict[str, Any] = rows[0]
    return row


async def assert_converged(*nodes: Node) -> None:
    """Byte-identical exports, equal state digests and equal version vectors everywhere."""
    first = nodes[0]
    text = await first.export_lines()
    digest = await first.state_digest()
    vector = await first.version_vector()
    for other in nodes[1:]:
        assert await other.export_lines() == text, f"{first.node_id} and {other.node_id} differ"
        assert await other.state_digest() == digest
        assert await other.version_vector() == vector


async def apply_page(node: Node, page: Page, peer: NodeId | None = None) -> int:
    """Merge a decoded page into ``node`` as a link does (one write, then the derived work);
    returns how many rows it added."""
    applied = await node.store.write(
        delta_log.apply_page, page, now_ms=node.now_ms(),
        max_skew_ms=node.settings.sync.max_clock_skew_ms, peer=peer, checked=True,
    )  # fmt: skip
    await node.remote_applied()
    return applied
