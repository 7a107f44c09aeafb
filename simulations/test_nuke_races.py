"""Fixed scenarios: a nuke against a concurrent edit of its row, in every order of arrival
(docs/REPLICATION.md §3, "Tombstones win").

A tombstone wins over every write of its row that did not see it, whatever the stamps: an
archive made on a device that had not heard of the nuke, stamped after it, must not bring the
row or its words back, on the nuking device or anywhere else.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from feral.storage.memory import memories

from .cluster import Cluster
from .model import store_records
from .nuking import erased_words_held
from .pruning import RETENTION_MS, prune_device
from .simnode import SimNode
from .test_partial_snapshot import run_steps


@pytest.fixture
def trio() -> Iterator[Cluster]:
    cluster = Cluster(3, "chain")
    yield cluster
    cluster.close()


@pytest.mark.parametrize("order", ["nuke first", "archive first", "together"])
def test_a_nuke_wins_over_a_later_archive_made_without_seeing_it(trio: Cluster, order: str) -> None:
    """The secret reaches all three; the server and the laptop part. The server nukes it, then
    the laptop (its clock later) archives it. Whichever reaches the phone first, every device
    ends with the tombstone and none holds the words."""
    server, phone, laptop = trio.nodes
    trio.secrets.remember(phone)
    trio.sync_until_quiet(1_000)
    (row_id,) = trio.secrets.words
    trio.isolate(server)
    trio.isolate(laptop)
    edges = trio.edges
    trio.edges = []
    trio.secrets.nuke(server, 0)
    trio.time.advance(1_000)
    laptop.commit(memories.set_archived, row_id, True)
    first, then = {"nuke first": ([(0, 1)], [(1, 2)]), "archive first": ([(1, 2)], [(0, 1)]),
                   "together": (edges, edges)}[order]  # fmt: skip
    trio.edges = first
    trio.sync_until_quiet(1_000)
    trio.edges = then
    trio.sync_until_quiet(1_000)
    trio.edges = edges
    trio.settle(1_000)
    for node in trio.nodes:
        record = store_records(node.conn)[("facts", row_id)]
        assert record[3], f"{node.name} holds the nuked row live"
        assert not erased_words_held(node, trio.secrets)
    trio.check_converged()


def away_past_the_window(cluster: Cluster, node: SimNode) -> None:
    """As the convergence machine's rule: ``node`` is cut off, more than the retention window
    passes while the others sync, and every other device prunes."""
    cluster.isolate(node)
    cluster.time.advance(RETENTION_MS + 60_000)
    edges, away = cluster.edges, cluster.nodes.index(node)
    cluster.edges = [edge for edge in edges if away not in edge]
    try:
        cluster.run_rounds(20)
    finally:
        cluster.edges = edges
    for other in cluster.nodes:
        if other is not node:
            prune_device(cluster, other)
    cluster.stats["absences"] += 1


@pytest.mark.parametrize("edit_while_away", [False, True])
def test_a_device_back_from_past_the_window_brings_no_nuked_row_back(edit_while_away: bool) -> None:
    """Issue 23's program: a chain phone–server–laptop–tablet; the laptop nukes a secret while
    the server is away past the window and the others prune; a new device then joins on the
    server. With ``edit_while_away`` the server archived the secret while away (its own edit,
    older than nothing it heard of). Every device ends with the tombstone, none with the words,
    and the server's link is never reported diverged."""
    cluster = Cluster(4, "chain")
    try:
        phone, server, laptop, _ = cluster.nodes
        cluster.secrets.remember(phone)
        cluster.sync_until_quiet(1_000)
        (row_id,) = cluster.secrets.words
        cluster.isolate(server)
        if edit_while_away:
            server.commit(memories.set_archived, row_id, True)
        cluster.secrets.nuke(laptop, 0)
        away_past_the_window(cluster, server)
        cluster.secrets.join(cluster, 1)
        cluster.sync_until_quiet(5_000)
        cluster.settle(5_000)
        for node in cluster.nodes:
            assert store_records(node.conn)[("facts", row_id)][3], f"{node.name} holds it live"
            assert not erased_words_held(node, cluster.secrets)
        cluster.check_converged()
    finally:
        cluster.close()


def test_an_echo_with_its_words_of_a_write_on_a_dead_row_raises_no_alarm_after_pruning() -> None:
    """The convergence machine's long run (seed 2100008958), shrunk: the server writes and
    boosts a fact, the watch nukes it, the tablet, not having heard of it, boosts it again
    later; the devices away past the window prune the tombstone's log entries. The phone holds
    the tablet's boost erased and the server, which never met the nuke, sends it with its
    words: the row is dead on the phone, so the copy is the same write, not a forgery (it was
    an integrity alarm between honest devices, standing for good)."""
    coffee = ("alice", "likes", "coffee")
    run_steps(
        [
            ("start", {"n": 5, "skews": [0, 60_000, 0, 0, 0], "topology": "mesh", "page_limit": 2}),
            ("write_newer_column", {"node": 0, "triple": coffee, "value": "teal"}),
            ("boost", {"category": "preference", "importance": 1.0, "node": 0, "triple": coffee}),
            ("away_past_the_window", {"node": 2}),
            ("hard_delete", {"node": 4, "triple": coffee}),
            ("set_clock", {"node": 0, "skew": 3_600_000}),
            ("away_past_the_window", {"node": 4}),
            ("boost", {"category": "identity", "importance": 1.0, "node": 3, "triple": coffee}),
            ("partition_or_heal", {"i": 10}),
            ("away_past_the_window", {"node": 3}),
        ]
    )
