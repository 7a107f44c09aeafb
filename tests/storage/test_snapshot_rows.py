"""What a snapshot receiver takes, and that it drops nothing (REPLICATION §6, Pruning and
snapshots).

Tombstone rows are never collected (storage/log/prune.py), so a snapshot carries every row its
sender deleted, as a tombstone that wins over the receiver's copy; a row a page lacks is one
its sender never held, and the receiver keeps it. A page's collected mark is ignored: a paired
peer that claimed one could otherwise delete every row of its receiver with one page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from feral.storage.log.prune import apply_prune
from feral.storage.log.snapshot import apply_snapshot_page, snapshot_pages, start_snapshot
from feral.storage.store import run_write

from .support import WINDOW_MS, A, B, Replica

MakeReplica = Callable[..., Replica]

DAY_MS = 86_400_000


def take_snapshot(receiver: Replica, sender: Replica) -> None:
    pages = snapshot_pages(sender.conn, start_snapshot(sender.conn), 1000)
    with receiver.conn:
        for page in pages:
            apply_snapshot_page(receiver.conn, page, now_ms=receiver.time(),
                                max_skew_ms=WINDOW_MS, peer="stale")  # fmt: skip


def collect(replica: Replica, window_ms: int) -> None:
    """Prune ``replica`` past the window, with no paired peer holding pruning back."""
    run_write(replica.conn, apply_prune, paired=[], now_ms=replica.time(), window_ms=window_ms)


def held(replica: Replica, row_id: str) -> list[tuple[int, int]]:
    return replica.conn.execute("SELECT hlc, deleted FROM facts WHERE id = ?", (row_id,)).fetchall()


def test_a_snapshot_row_the_receiver_has_not_seen_is_taken(make_replica: MakeReplica):
    """The rule is about writes the receiver saw: an unseen one is taken as ever."""
    a, b = make_replica("a", A), make_replica("b", B)
    row = b.remember("the sea", "is", "grey")

    take_snapshot(a, b)

    assert held(a, row["id"]) == held(b, row["id"]) != []


def test_a_forged_collected_mark_and_a_covering_vector_drop_no_row(make_replica: MakeReplica):
    """b sends a an empty snapshot claiming to have seen and collected everything: a's rows
    all stay, live, with their words."""
    a, b = make_replica("a", A), make_replica("b", B)
    rows = [a.remember("the sea", "is", colour) for colour in ("grey", "blue", "green")]
    forged = [
        replace(page, vector={A: 1 << 62}, collected=1 << 62)
        for page in snapshot_pages(b.conn, start_snapshot(b.conn), 1000)
    ]
    with a.conn:
        for page in forged:
            apply_snapshot_page(a.conn, page, now_ms=a.time(), max_skew_ms=WINDOW_MS, peer="b")
    assert all(held(a, row["id"]) == [(row["hlc"], 0)] for row in rows)


def test_a_nuked_row_travels_in_a_snapshot_after_its_log_entries_were_pruned(
    make_replica: MakeReplica,
):
    """b nukes a row and prunes past the window: the tombstone row stays, and a snapshot to a,
    which still holds the row live, kills it there too."""
    a, b = make_replica("a", A), make_replica("b", B)
    row = b.remember("the door code", "is", "4471")
    take_snapshot(a, b)
    b.nuke(row["id"])
    b.time.advance(40 * DAY_MS)
    collect(b, 30 * DAY_MS)
    assert b.conn.execute("SELECT count(*) FROM delta_log").fetchone() == (0,)
    take_snapshot(a, b)
    assert held(a, row["id"]) == held(b, row["id"]) and held(a, row["id"])[0][1] == 1
