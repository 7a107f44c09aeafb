"""Peers that hold a ``/sync`` link open and do nothing, run beside the other hostile cases.

Three probes: one says Hello and falls silent (a half-open handshake), one upgrades and never
speaks, and one authenticates, asks for everything and then stops reading, its receive buffer
shrunk to a few KiB so the server's socket fills behind it. The server must close the first two
after its handshake deadline (``sync.handshake_timeout_s``, 10 s), the third after its no-progress
timeout (node/links/peer.py, 30 s; not a setting), must not buffer without bound for
the one that stopped reading, and must keep serving everyone else meanwhile: the probes run in
a thread of their own while the other cases use the same server, and a full catch-up by another
peer runs while the stalled reader sits on its pages.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

from feral.node.links.peer import NO_PROGRESS_TIMEOUT_S
from feral.sync.codec import decode_message, encode_message
from feral.sync.messages import Hello, Vector
from feral.sync.session import (
    DeltasRequested,
    Failed,
    PageReceived,
    PeerCaughtUp,
    State,
    SyncSession,
)

from .hostile_support import (
    Outcome,
    Target,
    authenticate,
    hello_frame,
    http_call,
    local_peer,
    open_sync,
    outcome_of,
    receive,
)
from .raw_websocket import OP_BINARY, RawWebSocket, open_raw

__all__ = [
    "BULK_BYTES",
    "BULK_FACTS",
    "SLACK_S",
    "SlowPeers",
    "Stall",
    "Timed",
    "catch_up",
    "run_slow_peers",
]

BULK_FACTS = 150
BULK_BYTES = 60_000
"""About 9 MB for the server to stream: a stalled reader's window of pages is more than the
server's socket buffer (at most 4 MiB here) takes, so the server's send blocks."""
SLACK_S = 15.0
"""How late a timeout may fire on a busy 2-core machine."""


@dataclass
class Timed:
    outcome: Outcome
    seconds: float
    """From the probe's last frame (or the server's Hello) until the server closed."""


@dataclass
class Stall:
    seconds: float
    """From asking for everything until the server's status recorded that it gave up."""
    rss_growth: int
    """The server's resident memory at that moment minus just before the probe asked."""
    drained: list[tuple[int, int]]
    """``(opcode, size)`` of every frame left in the socket when the probe read it at last,
    up to the server's end of the connection."""
    last_error: str


@dataclass
class SlowPeers:
    half_open: Timed
    mute: Timed
    stall: Stall
    rows_caught_up: int
    """Rows another peer received in a full catch-up while the stalled reader held its link."""


async def run_slow_peers(target: Target) -> SlowPeers:
    """Start the three probes; once the stalled reader has asked for everything, catch up as
    another peer.

    One catch-up runs first, alone: serving one takes a few times the stream's size in
    transient memory, which the process keeps for reuse. Measured after it, the stall's growth
    is what the stalled link holds, plus what a second catch-up beside it needs beyond the
    first, not the allocator's first high-water mark."""
    await catch_up(target)
    half_open = asyncio.create_task(silent_after(target, [hello_frame(target)]))
    mute = asyncio.create_task(silent_after(target, []))
    asked = asyncio.Event()
    stall = asyncio.create_task(stop_reading(target, asked))
    waiting = asyncio.create_task(asked.wait())
    await asyncio.wait({waiting, stall}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    if stall.done() and not asked.is_set():
        await stall  # it failed before asking: raise what stopped it
    assert asked.is_set(), "the stalled reader did not ask for everything within 60 s"
    rows = await catch_up(target)
    return SlowPeers(await half_open, await mute, await stall, rows)


async def silent_after(target: Target, frames: list[bytes]) -> Timed:
    """Read the server's Hello, send ``frames``, then say nothing and wait for the server."""
    async with open_sync(target.url) as ws:
        assert isinstance(decode_message(await receive(ws)), Hello)
        for frame in frames:
            await ws.send(frame)
        started = time.monotonic()
        outcome = await outcome_of(ws, timeout=NO_PROGRESS_TIMEOUT_S + SLACK_S)
        return Timed(outcome, time.monotonic() - started)


async def stop_reading(target: Target, asked: asyncio.Event) -> Stall:
    """Authenticate as the second device, ask for everything (then set ``asked``), and read
    nothing more."""
    assert target.second is not None and target.server.process is not None
    pid = target.server.process.pid
    raw = await open_raw(target.server.port, receive_buffer=4096)
    try:
        await authenticate_raw(raw, SyncSession(local_peer(target.second)))
        rss_before = resident_bytes(pid)
        await raw.send(encode_message(Vector({})))
        started = time.monotonic()
        asked.set()
        row = await wait_for_error(target, target.second.node_id, NO_PROGRESS_TIMEOUT_S + SLACK_S)
        seconds = time.monotonic() - started
        growth = resident_bytes(pid) - rss_before
        return Stall(seconds, growth, await drain(raw), str(row["last_error"]))
    finally:
        await raw.aclose()


async def authenticate_raw(raw: RawWebSocket, session: SyncSession) -> None:
    for frame in session.frames_to_send():
        await raw.send(frame)
    while session.state is State.HANDSHAKE:
        opcode, payload = await asyncio.wait_for(raw.receive(), 10)
        assert opcode == OP_BINARY
        session.receive_frame(payload)
        for frame in session.frames_to_send():
            await raw.send(frame)
    assert session.state is State.OPEN, session.events_received()
    opcode, payload = await asyncio.wait_for(raw.receive(), 10)
    assert isinstance(decode_message(payload), Vector)


async def wait_for_error(target: Target, peer: str, timeout: float) -> dict[str, object]:
    """Poll the server's status until ``peer`` has an error recorded."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = await asyncio.to_thread(http_call, target, "/api/sync/status")
        (row,) = [p for p in answer.body["peers"] if p["node_id"] == peer]
        if row["errors"]:
            return dict(row)
        await asyncio.sleep(0.5)
    raise AssertionError(f"the server recorded nothing for {peer} within {timeout} s")


async def drain(raw: RawWebSocket) -> list[tuple[int, int]]:
    """Read what the server left in the socket, until it ends the connection."""
    frames = []
    try:
        while True:
            opcode, payload = await asyncio.wait_for(raw.receive(), 10)
            frames.append((opcode, len(payload)))
    except (EOFError, ConnectionResetError):
        return frames


def resident_bytes(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    (line,) = [line for line in status.splitlines() if line.startswith("VmRSS:")]
    return int(line.split()[1]) * 1024


async def catch_up(target: Target) -> int:
    """A paired peer's whole catch-up: every page the server sends, each one acked."""
    async with open_sync(target.url) as ws:
        session = SyncSession(local_peer(target.identity))
        await authenticate(ws, session)
        session.send_vector({})
        rows, caught_up = 0, False
        while not caught_up:
            for frame in session.frames_to_send():
                await ws.send(frame)
            session.receive_frame(await receive(ws))
            for event in session.events_received():
                assert not isinstance(event, Failed), event
                if isinstance(event, PageReceived):
                    rows += len(event.page.deltas)
                    session.ack(event.page)
                elif isinstance(event, DeltasRequested):
                    session.send_caught_up({})
                caught_up = caught_up or isinstance(event, PeerCaughtUp)
        return rows
