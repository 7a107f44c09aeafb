"""Access strength: how this device has retrieved a memory, a small local lift in ranking.

The idea is the spaced-repetition bump of the Matrix-bot memory design: each retrieval
strengthens a memory, more when it comes after the memory had started to fade (spaced) than
when it repeats one a minute ago (massed), and the strength fades again when the memory is not
retrieved. Here:

- ``retention = 2 ** (−days since the last counted retrieval / half-life)``, where the half-life
  grows with the strength: ``HALF_LIFE_DAYS × (1 + strength)`` (a rehearsed memory fades slower);
- the first retrieval starts the clock (strength 0); a later one adds what had faded since:
  ``strength ← min(MAX_STRENGTH, strength + 1 − retention)``; one within :data:`MIN_SPACING_MS`
  of the last counted one is massed, not spaced, and counts for nothing (nor is it written). So
  searches within an hour of each other never change each other's ranking: the same search
  asked twice answers alike;
- ranking multiplies by ``access = 1 + ACCESS_WEIGHT × strength / MAX_STRENGTH × retention``:
  1 for a memory never retrieved here, at most ``1 + ACCESS_WEIGHT``, back towards 1 as it
  fades. It can reorder near-ties, never overturn a clear difference of relevance, and it never
  lowers a score: nothing is archived, hidden or demoted because it was not read.

The rows live in ``access_strength``, a local table like the vectors (migration
``0016_access_strength``): a read is not a change of what is remembered, so it never enters the
delta log, the export or the wire, and devices rank their own way by their own use. Recording
is a plain local write: no stamp, no log entry, no wake of the links. A hard delete takes the
memory's row with it (a trigger of the migration).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from feral.storage.db.connection import Connection

__all__ = [
    "ACCESS_WEIGHT",
    "HALF_LIFE_DAYS",
    "MAX_STRENGTH",
    "MIN_SPACING_MS",
    "Access",
    "access_factor",
    "bumped",
    "read_access",
    "record_access",
    "retention",
]

DAY_MS = 86_400_000
MIN_SPACING_MS = 3_600_000
"""Retrievals closer together than an hour are one retrieval (a burst is not rehearsal)."""
HALF_LIFE_DAYS = 7.0
"""A memory retrieved once is half faded after a week without another retrieval."""
MAX_STRENGTH = 5.0
ACCESS_WEIGHT = 0.2
"""The most retrieval can lift a score: by a fifth, less than a boost of 1.2 and far less than
a difference of relevance between a good hit and a poor one."""


@dataclass(frozen=True)
class Access:
    """One memory's retrievals here: its strength, when it was last retrieved, how often."""

    strength: float = 0.0
    last_access_ms: int = 0
    accesses: int = 0


def retention(access: Access, now_ms: int) -> float:
    """How much of the strength is left ``now_ms`` (0 for a memory never retrieved)."""
    if access.accesses == 0:
        return 0.0
    days = max(0, now_ms - access.last_access_ms) / DAY_MS
    return float(2.0 ** (-days / (HALF_LIFE_DAYS * (1.0 + access.strength))))


def bumped(access: Access, now_ms: int) -> Access:
    """The access after one more retrieval at ``now_ms`` (the same one if it is massed)."""
    if access.accesses == 0:
        return Access(0.0, now_ms, 1)
    if now_ms - access.last_access_ms < MIN_SPACING_MS:
        return access
    strength = min(MAX_STRENGTH, access.strength + 1.0 - retention(access, now_ms))
    return Access(strength, now_ms, access.accesses + 1)


def access_factor(access: Access, now_ms: int) -> float:
    """The ranking's multiplier: from 1 (never retrieved, or long faded) to ``1 + weight``."""
    lift = ACCESS_WEIGHT * (access.strength / MAX_STRENGTH) * retention(access, now_ms)
    return 1.0 + max(0.0, lift)


def read_access(conn: Connection, memory_ids: Sequence[str]) -> dict[str, Access]:
    """The access rows of ``memory_ids`` (memories never retrieved here are left out)."""
    if not memory_ids:
        return {}
    records = conn.execute(
        "SELECT memory_id, strength, last_access_ms, accesses FROM access_strength "
        "WHERE memory_id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(memory_ids)),),
    ).fetchall()
    return {str(r[0]): Access(float(r[1]), int(r[2]), int(r[3])) for r in records}


def record_access(conn: Connection, memory_ids: Sequence[str], now_ms: int) -> int:
    """One retrieval of each of ``memory_ids`` at ``now_ms`` (inside a write transaction; the
    same id twice counts once). Returns how many rows were written (a massed retrieval writes
    none)."""
    unique = sorted(set(memory_ids))
    current = read_access(conn, unique)
    rows = []
    for memory_id in unique:
        before = current.get(memory_id, Access())
        after = bumped(before, now_ms)
        if after != before:
            rows.append((memory_id, after.strength, after.last_access_ms, after.accesses))
    conn.executemany(
        "INSERT INTO access_strength(memory_id, strength, last_access_ms, accesses) "
        "VALUES (?, ?, ?, ?) ON CONFLICT(memory_id) DO UPDATE SET strength = excluded.strength, "
        "last_access_ms = excluded.last_access_ms, accesses = excluded.accesses",
        rows,
    )
    return len(rows)
