"""A digest of each origin's log, kept up to date with every write (docs/PROTOCOL.md §7).

Two nodes whose vectors and entry counts are equal hold the same entries by stamp, but not
necessarily the same content: a forged entry that reached one of them first, under a stamp its
origin also used, is kept there and the real one never arrives (issue 11, finding 7). The rows
are the last-write-wins fold of the log, so equal logs mean equal state; comparing the logs
needs their content, not only their stamps.

The export's SHA-256 (``state_digest``) says that too, but it reads and serialises every row:
about 0.2-1 s on a 20,000-row store, far too much for every ``CaughtUp``. So each origin's log
has a digest of its own, the sum modulo 2²⁵⁶ of its entries' SHA-256 (an order-free set hash),
kept in ``version_vector.digest`` and moved in the same transaction as the entries: adding an
entry adds its hash, erasing one's payload (a nuke) swaps its hash for the tombstone's. A
``CaughtUp`` then costs one small read. A digest is ``NULL`` until computed (a database from
before this column): :func:`fill_missing` computes it once, at open.

A sum of hashes is not a signature: it tells honest copies apart, and a forger changing one
entry would need a second preimage, but a forger who controls many entries could aim for a
colliding sum. Signed per-origin logs close that (docs/PROTOCOL.md §11).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from feral.sync.types import NodeId

from .connection import Connection

__all__ = [
    "DIGEST_BYTES",
    "LogEntry",
    "entry_hash",
    "fill_missing",
    "log_digests",
    "new_entries",
    "replace_entries",
    "updated_digest",
]

DIGEST_BYTES = 32
_MODULUS = 1 << (8 * DIGEST_BYTES)

LogEntry = tuple[str, int, int, str, "bytes | bytearray | None"]
"""A ``delta_log`` row: origin, hlc, table code, row id, payload (``None``: a tombstone)."""


def entry_hash(entry: LogEntry) -> int:
    """SHA-256 of one log entry, every field length-delimited so no two entries share bytes."""
    origin, hlc, table, row_id, payload = entry
    head = f"{origin}\x00{hlc}\x00{table}\x00{row_id}\x00".encode()
    body = b"\x00" if payload is None else b"\x01" + bytes(payload)
    return int.from_bytes(hashlib.sha256(head + body).digest(), "big")


def _as_bytes(total: int) -> bytes:
    return (total % _MODULUS).to_bytes(DIGEST_BYTES, "big")


def _whole_origin(conn: Connection, origin: str) -> int:
    rows = conn.execute(
        "SELECT origin, hlc, tbl, row_id, payload FROM delta_log WHERE origin = ?", (origin,)
    )
    return sum(entry_hash(tuple(row)) for row in rows)


def new_entries(
    conn: Connection, origin: str, held: int, entries: Sequence[LogEntry]
) -> list[LogEntry]:
    """Those of ``entries`` (one origin's, about to be inserted) that the log lacks.

    Entries above ``held`` (the origin's vector entry) are new; only a repair re-sends entries
    at or below it, and those are looked up (one range read of the batch's stamps).
    """
    if all(entry[1] > held for entry in entries):
        return _first_of_each(entries, set())
    low = min(entry[1] for entry in entries)
    high = max(entry[1] for entry in entries)
    known = {
        int(hlc)
        for (hlc,) in conn.execute(
            "SELECT hlc FROM delta_log WHERE origin = ? AND hlc BETWEEN ? AND ?",
            (origin, low, high),
        )
    }
    return _first_of_each(entries, known)


def _first_of_each(entries: Sequence[LogEntry], known: set[int]) -> list[LogEntry]:
    """What ``INSERT OR IGNORE`` keeps: the first entry of each stamp not already stored."""
    fresh = []
    for entry in entries:
        if entry[1] not in known:
            known.add(entry[1])
            fresh.append(entry)
    return fresh


def updated_digest(
    conn: Connection,
    origin: str,
    current: bytes | None,
    added: Iterable[LogEntry] = (),
    removed: Iterable[LogEntry] = (),
) -> bytes:
    """The origin's digest after ``added`` entries join its log and ``removed`` ones leave it.

    Call after the log itself changed: a digest never computed (``current`` None) is computed
    from the log as it now is.
    """
    if current is None:
        return _as_bytes(_whole_origin(conn, origin))
    total = int.from_bytes(current, "big")
    total += sum(map(entry_hash, added)) - sum(map(entry_hash, removed))
    return _as_bytes(total)


def replace_entries(
    conn: Connection, removed: Sequence[LogEntry], added: Sequence[LogEntry]
) -> None:
    """Entries rewritten in place (a nuke erasing payloads): move each origin's digest."""
    origins = sorted({entry[0] for entry in removed})
    for origin in origins:
        row = conn.execute(
            "SELECT digest FROM version_vector WHERE origin = ?", (origin,)
        ).fetchone()
        if row is None or row[0] is None:
            continue  # computed from the log, as it will then be, when first needed
        mine_removed = [e for e in removed if e[0] == origin]
        mine_added = [e for e in added if e[0] == origin]
        digest = updated_digest(conn, origin, row[0], mine_added, mine_removed)
        conn.execute("UPDATE version_vector SET digest = ? WHERE origin = ?", (digest, origin))


def fill_missing(conn: Connection) -> None:
    """Compute the digests not yet computed (a log from before them); a read when none is."""
    missing = [o for (o,) in conn.execute("SELECT origin FROM version_vector WHERE digest IS NULL")]
    if not missing:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for origin in missing:
            digest = _as_bytes(_whole_origin(conn, origin))
            conn.execute("UPDATE version_vector SET digest = ? WHERE origin = ?", (digest, origin))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def log_digests(conn: Connection) -> dict[NodeId, bytes]:
    """Each origin's log digest as held here (one computed on the spot if never stored)."""
    result = {}
    for origin, digest in conn.execute("SELECT origin, digest FROM version_vector"):
        result[NodeId(origin)] = (
            bytes(digest) if digest is not None else _as_bytes(_whole_origin(conn, origin))
        )
    return result
