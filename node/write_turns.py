"""A bulk write beside a running ``feral serve`` (or resident): the other writer gets its turn.

SQLite has one write lock per database file, and a process that waits for it polls: after its
first few tries, every 100 ms, until its busy timeout (5 s, storage/db/connection.py) runs out. A
bulk write (``memory import``, ``ingest``) runs many short transactions back to back, and takes
the lock again microseconds after each commit, so a waiting serve almost never finds it free:
it waited past its timeout, and the link whose page it was storing ended with
``storage_error``; the peer's writes then waited for the link's reconnect, whose backoff grows
while the import lasts (up to a minute). So, while another long-lived writer holds the home,
a bulk write leaves the lock free for :data:`TURN_S` (longer than one poll) after every
:data:`HOLD_S` it held it: a waiting writer gets in within about a second, far inside its
timeout, and the bulk is about 15% slower. Alone on its home it never pauses.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

from feral.node.home.resident_runtime import resident_held
from feral.node.home.serve_runtime import serve_running

__all__ = ["HOLD_S", "TURN_S", "WriteTurns"]

T = TypeVar("T")

HOLD_S = 1.0
"""How long a bulk write holds the lock, over consecutive transactions, before a turn."""
TURN_S = 0.15
"""How long it then leaves the lock free: more than SQLite's longest poll interval (100 ms)."""


class WriteTurns:
    """Runs a bulk write's transactions one by one, giving a turn when another writer waits
    for one (a serve or a resident holds the home: decided once, when the bulk starts)."""

    def __init__(self, home: Path) -> None:
        self.shared = serve_running(home) or resident_held(home)
        self.held_s = 0.0

    async def run(self, transaction: Awaitable[T]) -> T:
        """Await ``transaction`` (one committed write), then pause if its turn is due."""
        started = time.monotonic()
        result = await transaction
        if self.shared:
            self.held_s += time.monotonic() - started
            if self.held_s >= HOLD_S:
                self.held_s = 0.0
                await asyncio.sleep(TURN_S)
        return result
