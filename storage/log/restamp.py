"""Bringing a node's own stamps back to its clock after the clock ran ahead (issue 11).

A device whose clock ran ahead (by hours, or by a year) and was then corrected holds writes of
its own stamped in its future. Its clock must stay above them (an origin's log is read in stamp
order), so every new write is stamped ahead as well, and peers refuse them all until real time
catches up; beyond a day, local writes stop. The way back without a new identity: while no peer
holds those entries (peers with a right clock refused them), they can be stamped again, at
fresh stamps in the same order just above the clock, and the node carries on from there.

Entries a peer already holds cannot be re-stamped: that peer's cursor for this origin is past
the new stamps and would never ask for them. :func:`restamp_ahead` refuses then, naming the peer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from feral.storage.db.connection import Connection
from feral.sync.codec import decode_values
from feral.sync.delta import Delta
from feral.sync.errors import ClockError
from feral.sync.hlc import COUNTER_BITS, COUNTER_MASK
from feral.sync.schema import table_by_code
from feral.sync.types import NodeId, RowId
from feral.sync.units import format_ms, short_id

from . import row_digest
from .delta_log import apply_deltas, own_high_water, prior_from_columns

__all__ = ["Restamped", "restamp_ahead"]


@dataclass(frozen=True)
class Restamped:
    """What :func:`restamp_ahead` did: how many entries moved, and this node's newest stamp
    before and after (packed)."""

    entries: int
    newest_before: int
    newest_after: int


def restamp_ahead(conn: Connection, origin: NodeId, now_ms: int, mark: int) -> Restamped:
    """Stamp ``origin``'s entries that lie ahead of ``now_ms`` again, in order, from the clock.

    ``mark`` is the clock mark kept beside the database (it may be ahead with no entry ahead:
    a write that failed). Must run inside a write transaction: the log, the rows, the vector
    move together or not at all.

    Raises:
        ClockError: a peer already holds some of those entries (the message names it).
    """
    now_stamp = (now_ms << COUNTER_BITS) | COUNTER_MASK
    newest = max(own_high_water(conn, origin), mark)
    _refuse_if_taken(conn, origin, now_stamp, now_ms)
    ahead = conn.execute(
        "SELECT hlc, tbl, row_id FROM delta_log WHERE origin = ? AND hlc > ? ORDER BY hlc",
        (origin, now_stamp),
    ).fetchall()
    kept = conn.execute(
        "SELECT max(hlc) FROM delta_log WHERE origin = ? AND hlc <= ?", (origin, now_stamp)
    ).fetchone()[0]
    next_stamp = max(int(kept or 0) + 1, now_ms << COUNTER_BITS)
    moved: list[tuple[int, int, int, RowId]] = []
    for old, code, row_id in ahead:
        # Ascending, and each new stamp is at or below its old one: no key is ever taken twice.
        conn.execute(
            "UPDATE delta_log SET hlc = ? WHERE origin = ? AND hlc = ?", (next_stamp, origin, old)
        )
        # the writes that replaced this entry name it by its new stamp (sync/conflicts.py)
        conn.execute(
            "UPDATE delta_log SET prior_hlc = ? WHERE prior_origin = ? AND prior_hlc = ?",
            (next_stamp, origin, old),
        )
        moved.append((old, next_stamp, code, RowId(row_id)))
        next_stamp += 1
    for old, new, code, row_id in moved:
        _restamp_row(conn, origin, old, new, code, row_id)
    after = (next_stamp - 1) if moved else int(kept or 0)
    if own_high_water(conn, origin):
        conn.execute("UPDATE version_vector SET hlc = ? WHERE origin = ?", (after, origin))
    return Restamped(len(moved), newest, after)


def _refuse_if_taken(conn: Connection, origin: NodeId, now_stamp: int, now_ms: int) -> None:
    """Refuse when a peer is known to hold one of ``origin``'s entries stamped ahead."""
    for peer, name, text in conn.execute("SELECT node_id, name, vector FROM peer_status"):
        held = int(json.loads(text).get(origin, 0))
        if held > now_stamp:
            who = f"{name} ({short_id(peer)})" if name else short_id(peer)
            wait = format_ms((held >> COUNTER_BITS) - now_ms)
            raise ClockError(
                f"peer {who} already holds this device's writes stamped up to {wait} ahead of "
                "its clock, so they cannot be stamped again; new writes reach that peer again "
                f"once this clock passes them (in {wait}), or sooner from a new identity "
                "(feral init in a new home, then pair it)"
            )


def _restamp_row(
    conn: Connection, origin: NodeId, old: int, new: int, code: int, row_id: RowId
) -> None:
    """Give the row the entry's new stamp if that entry is its version, then let any other
    entry of the row that now outranks it win, as it would have had it arrived after."""
    table = table_by_code(code)
    held = row_digest.rows_hash(conn, table.name, [row_id])
    conn.execute(
        f'UPDATE "{table.name}" SET hlc = ? WHERE id = ? AND origin = ? AND hlc = ?',
        (new, row_id, origin, old),
    )
    # the kept digest a CaughtUp carries follows the row (a rival below moves it by itself)
    row_digest.store_digest(conn, row_digest.rows_hash(conn, table.name, [row_id]) - held)
    rival = conn.execute(
        "SELECT origin, hlc, payload, prior_hlc, prior_origin FROM delta_log "
        "WHERE tbl = ? AND row_id = ? "
        "ORDER BY hlc DESC, origin DESC LIMIT 1",
        (code, row_id),
    ).fetchone()
    if rival is not None and (rival[1], rival[0]) > (new, origin):
        values = None if rival[2] is None else decode_values(rival[2])
        prior = prior_from_columns(rival[3], rival[4])
        rival_delta = Delta(table.name, row_id, int(rival[1]), NodeId(rival[0]), values, prior)
        apply_deltas(conn, [rival_delta])
