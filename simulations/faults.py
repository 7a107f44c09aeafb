"""A device's store failing under its links: a full disk, a write that fails (issue 11, #1 and #9).

:class:`FaultyConnection` wraps a device's real SQLite connection and, while a fault is set,
makes its writes raise the driver's own error for a full disk (``SQLITE_FULL``), as SQLite does:
the failing statement is undone, and with ``whole`` the whole transaction too (SQLite may roll a
transaction back by itself after a full disk or an I/O error). Reads always work, so the oracle
and a peer's catch-up still read the store. The product then meets the fault where it would:
``run_write`` turns it into a ``StorageError``, the link handler refuses a page it could not
apply, and a bookkeeping write that fails ends the link through ``LinkHandler.store_failed``.

The oracles here: a link whose write failed is dropped (simulations/simnode.py checks it after
every event), and no peer's status claims that a device holds more than it does (an ack sent for
a page whose transaction rolled back would).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sqlean

from feral.storage.db.connection import Connection, Cursor, Parameters
from feral.sync.types import NodeId

if TYPE_CHECKING:
    from .simnode import SimNode

__all__ = ["Faults", "FaultyConnection", "SQLITE_FULL", "status_beyond_held"]

SQLITE_FULL = 13

_WRITE = re.compile(r"\s*(INSERT|UPDATE|DELETE|REPLACE)\b(?!.*\btemp\.)", re.IGNORECASE | re.DOTALL)
"""A write to the database file; the connection's TEMP tables live elsewhere (not on the disk
that filled up)."""


@dataclass
class Faults:
    """What is wrong with a device's disk. It outlives the connection: a restart on a full disk
    finds it full still.

    Attributes:
        passes: writes that still succeed before the fault bites (it may land mid-transaction).
        failures: writes that fail after that; ``None`` while the disk stays full until cleared.
        whole: a failing write also rolls back the whole transaction, as SQLite may.
        injected: how many writes have failed so far (the oracle's count).
    """

    passes: int = 0
    failures: int | None = 0
    whole: bool = False
    injected: int = 0

    @property
    def active(self) -> bool:
        return self.failures is None or self.failures > 0

    def set(self, *, passes: int, failures: int | None, whole: bool) -> None:
        self.passes, self.failures, self.whole = passes, failures, whole

    def clear(self) -> None:
        """Space is back (or the lock is gone): every write works again."""
        self.passes, self.failures = 0, 0

    def bite(self, sql: str) -> bool:
        """Whether this statement fails: a write, once the passes are used up."""
        if not self.active or not _WRITE.match(sql):
            return False
        if self.passes:
            self.passes -= 1
            return False
        if self.failures is not None:
            self.failures -= 1
        self.injected += 1
        return True


def full_disk() -> sqlean.OperationalError:
    """The driver's error for a full disk, with its result code, as SQLite raises it."""
    error = sqlean.OperationalError("database or disk is full")
    error.sqlite_errorcode = SQLITE_FULL
    return error


class FaultyConnection:
    """A real connection (the ``Connection`` protocol) whose writes fail while ``faults`` say."""

    def __init__(self, conn: Connection, faults: Faults) -> None:
        self._conn = conn
        self.faults = faults

    @property
    def in_transaction(self) -> bool:
        return self._conn.in_transaction

    def execute(self, sql: str, parameters: Parameters = (), /) -> Cursor:
        self._check(sql)
        return self._conn.execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Parameters], /) -> Cursor:
        self._check(sql)
        return self._conn.executemany(sql, parameters)

    def close(self) -> None:
        self._conn.close()

    def _check(self, sql: str) -> None:
        if self.faults.bite(sql):
            if self.faults.whole and self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise full_disk()


def status_beyond_held(nodes: Iterable[SimNode], restored: set[NodeId]) -> list[str]:
    """Oracle: what a node's status says a peer holds (its CaughtUp vectors and its acks) never
    exceeds what that peer holds. A peer restored under its own id may hold less than it did,
    so it is skipped; so is a peer that is no member any more (restored under a new id)."""
    nodes = list(nodes)
    vectors = {n.node_id: n.vector() for n in nodes}
    problems = []
    for node in nodes:
        for peer, recorded in node.conn.execute("SELECT node_id, vector FROM peer_status"):
            held = vectors.get(peer)
            if held is None or peer in restored:
                continue
            for origin, hlc in json.loads(recorded).items():
                if hlc > held.get(origin, 0):
                    problems.append(
                        f"{node.name}'s status says {peer[:6]} holds {origin[:6]}@{hlc}; it "
                        f"holds {held.get(origin, 0)}"
                    )
    return problems
