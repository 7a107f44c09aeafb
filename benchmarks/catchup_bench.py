"""A catch-up between two real ``feral serve``/``feral sync now`` processes on loopback.

Node A holds N facts; node B is empty and serving. ``feral sync now`` on A streams A's log to B
through a byte-counting TCP relay, so the figure is what crossed the wire (WebSocket framing
included). The same pages applied in-process into an empty store give the reference rate.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from feral.node.node import Node
from feral.node.settings.config import PeerSettings, load_settings, save_settings, with_peer
from feral.storage.log.delta_log import apply_page, changes_since
from feral.storage.store import open_sync, run_write
from feral.sync.codec import decode_page, encode_page, encode_values
from feral.sync.delta import MAX_PAGE_DELTAS, Page
from feral.sync.types import VersionVector

from .corpus import make_triples

__all__ = ["run_catchup"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _feral() -> list[str]:
    script = Path(sys.executable).parent / "feral"
    return [str(script)] if script.exists() else [sys.executable, "-m", "cli"]


class ByteRelay:
    """A TCP relay on loopback that counts the bytes flowing each way."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = _free_port()
        self.up = 0
        self.down = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> ByteRelay:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)

    async def _stop(self) -> None:
        """Close the listening socket and end any connection still open, so nothing leaks."""
        self._server.close()
        await self._server.wait_closed()
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        await asyncio.gather(
            self._pump(reader, up_writer, "up"), self._pump(up_reader, writer, "down")
        )

    async def _pump(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter, way: str) -> None:
        while data := await src.read(1 << 16):
            setattr(self, way, getattr(self, way) + len(data))
            dst.write(data)
            await dst.drain()
        dst.close()


def _without_embeddings(home: Path) -> None:
    """Both nodes skip derived vectors, so the catch-up is compared with the same work in-process
    (the embedding cost is the write benchmark's business)."""
    settings = load_settings(home)
    save_settings(home, replace(settings, memory=replace(settings.memory, embedder="none")))


async def _seed(home_a: Path, home_b: Path, rows: int, relay_port: int, tls: bool = False) -> None:
    for home in (home_a, home_b):
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        _without_embeddings(home)
    node_a, node_b = await Node.open(home_a), await Node.open(home_b)
    await node_a.import_facts(make_triples(rows))
    ids = node_a.node_id, node_b.node_id
    await node_a.close()
    await node_b.close()
    a_settings = with_peer(
        load_settings(home_a),
        PeerSettings(ids[1], f"{'wss' if tls else 'ws'}://127.0.0.1:{relay_port}"),
    )
    save_settings(home_a, a_settings)
    save_settings(home_b, with_peer(load_settings(home_b), PeerSettings(ids[0], None)))


def _serve(home: Path, port: int, tls: bool = False) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [*_feral(), "--home", str(home), "serve", "--port", str(port),
         "--tls" if tls else "--no-tls"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("feral serve did not start")


def _all_pages(home: Path) -> list[Page]:
    conn = open_sync(home / "feral.db")
    theirs: VersionVector = {}
    pages: list[Page] = []
    while batch := changes_since(conn, theirs, MAX_PAGE_DELTAS):
        pages.extend(batch)
        for page in batch:
            theirs[page.origin] = page.last_hlc
    conn.close()
    return pages


def _in_process_rate(pages: list[Page], path: Path) -> float:
    conn = open_sync(path)
    frames = [encode_page(p) for p in pages]
    started = time.perf_counter()
    for frame in frames:
        page = decode_page(frame)
        now = time.time_ns() // 1_000_000
        run_write(conn, apply_page, page, now_ms=now, max_skew_ms=300_000, checked=True)
    elapsed = time.perf_counter() - started
    conn.close()
    return sum(len(p.deltas) for p in pages) / elapsed


def run_catchup(rows: int, *, tls: bool = False) -> dict[str, Any]:
    """Measure the catch-up and return rates, the ratio and bytes per row; over ``wss://``
    (``feral serve --tls``) if ``tls``."""
    with tempfile.TemporaryDirectory(prefix="feral-catchup-") as tmp:
        root = Path(tmp)
        port = _free_port()
        with ByteRelay(port) as relay:
            asyncio.run(_seed(root / "a", root / "b", rows, relay.port, tls))
            server = _serve(root / "b", port, tls)
            try:
                started = time.perf_counter()
                done = subprocess.run(
                    [*_feral(), "--home", str(root / "a"), "sync", "now"],
                    capture_output=True, text=True, env=os.environ.copy(),
                )  # fmt: skip
                elapsed = time.perf_counter() - started
            finally:
                server.terminate()
                server.wait(10)
            if done.returncode != 0:
                raise RuntimeError(f"sync now failed: {done.stderr.strip()}")
            wire = relay.up + relay.down
        pages = _all_pages(root / "a")
        raw = sum(len(encode_values(d.values or ())) for p in pages for d in p.deltas)
        local = _in_process_rate(pages, root / "c.db")
    return {
        "rows": rows,
        "catchup_rows_per_s": rows / elapsed,
        "catchup_seconds": elapsed,
        "in_process_apply_rows_per_s": local,
        "catchup_vs_merge": (rows / elapsed) / local,
        "wire_bytes": wire,
        "wire_bytes_per_row": wire / rows,
        "raw_value_bytes_per_row": raw / rows,
        "wire_bytes_ratio": wire / raw,
    }
