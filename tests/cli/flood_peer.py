"""A paired peer that floods a real ``feral serve`` with frames, as a process of its own.

It authenticates with the key of a paired home, then sends Vector frames (each one asks the
server to compare what it holds) as fast as the server takes them, reading whatever the server
answers, until the server closes the link or the time is up. It runs apart from the test so its
busy loop shares no interpreter with the measurements. It prints one JSON line:
``[frames sent, close code, the server's error frames as text]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from websockets.exceptions import ConnectionClosed

from feral.node.home.identity import load_or_create_identity
from feral.sync.codec import encode_message
from feral.sync.messages import Vector
from feral.sync.session import SyncSession

from .hostile_support import authenticate, local_peer, open_sync

__all__ = ["flood", "flooding"]

ROOT = Path(__file__).resolve().parents[2]


async def flood(url: str, home: Path, seconds: float) -> tuple[int, int | None, str]:
    identity = load_or_create_identity(home)
    sent, errors = 0, []
    async with open_sync(url) as ws:
        await authenticate(ws, SyncSession(local_peer(identity)))

        async def drain() -> None:
            async for frame in ws:
                if isinstance(frame, bytes) and b"rate" in frame:
                    errors.append(frame.decode("utf-8", "replace"))

        reader = asyncio.create_task(drain())
        frame = encode_message(Vector({}))
        deadline = time.monotonic() + seconds
        with contextlib.suppress(ConnectionClosed):
            while time.monotonic() < deadline:
                await ws.send(frame)
                sent += 1
                await asyncio.sleep(0)  # let the reader take the server's answers
        await asyncio.wait({reader}, timeout=10)
        reader.cancel()
        return sent, ws.close_code, " ".join(errors)


@contextlib.contextmanager
def flooding(url: str, home: Path, seconds: float) -> Iterator[subprocess.Popen[str]]:
    """Run :func:`flood` in its own process; killed on the way out if still running."""
    argv = [sys.executable, "-m", "tests.cli.flood_peer", url, str(home), str(seconds)]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()  # unread when the test failed before reading it


if __name__ == "__main__":
    result = asyncio.run(flood(sys.argv[1], Path(sys.argv[2]), float(sys.argv[3])))
    print(json.dumps(result))
