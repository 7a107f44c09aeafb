"""What a snapshot receiver takes and drops (PROTOCOL §7, Pruning and snapshots).

A row whose tombstone was collected is gone from the node that collected it, and that node's
vector still covers the row's writes. A snapshot from a copy that never saw the tombstone
holds the row live. Taking it would bring the deleted row back on the receiver only, while a
snapshot the other way drops it: two nodes with equal vectors would end with different rows,
and nothing would mend it.
"""

from __future__ import annotations

from collections.abc import Callable

from feral.storage.export import export_lines
from feral.storage.prune import apply_prune
from feral.storage.snapshot import apply_snapshot_page, snapshot_pages, start_snapshot
from feral.storage.store import run_write

from .support import WINDOW_MS, A, B, Replica, pull

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


def test_a_stale_snapshot_does_not_bring_back_a_row_whose_tombstone_was_collected(
    make_replica: MakeReplica,
):
    a, stale = make_replica("a", A), make_replica("stale", B)
    row = a.remember("the sky", "is", "blue")
    a.remember("the grass", "is", "green")
    pull(stale, a)  # the stale copy holds the fact live, and never hears of its deletion
    a.nuke(row["id"])
    a.time.advance(2 * DAY_MS)
    collect(a, window_ms=DAY_MS)
    assert held(a, row["id"]) == []  # the tombstone was collected

    take_snapshot(a, stale)

    assert held(a, row["id"]) == [], "the collected row came back from a stale snapshot"
    assert any('"the grass"' in line for line in export_lines(a.conn))


def test_both_directions_of_a_snapshot_agree_on_a_collected_row(make_replica: MakeReplica):
    """Whichever of the two sends the snapshot, the row ends the same on both."""
    a, stale = make_replica("a", A), make_replica("stale", B)
    row = a.remember("the sky", "is", "blue")
    pull(stale, a)
    a.nuke(row["id"])
    a.time.advance(2 * DAY_MS)
    collect(a, window_ms=DAY_MS)

    take_snapshot(a, stale)
    take_snapshot(stale, a)

    assert held(a, row["id"]) == held(stale, row["id"]) == []
    assert list(export_lines(a.conn)) == list(export_lines(stale.conn))


def test_a_snapshot_row_the_receiver_has_not_seen_is_taken(make_replica: MakeReplica):
    """The rule is about writes the receiver saw: an unseen one is taken as ever."""
    a, b = make_replica("a", A), make_replica("b", B)
    row = b.remember("the sea", "is", "grey")

    take_snapshot(a, b)

    assert held(a, row["id"]) == held(b, row["id"]) != []
