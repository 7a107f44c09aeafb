"""Sync for years, on the simulated cluster with a clock the test moves (issue 16).

A mesh runs for 90 "days" with a prune every day: the log stays bounded by what the window
holds; a device that was off all that time comes back, is sent a snapshot, loses nothing and
brings back no nuked row; a brand-new device joins from a snapshot and relays to a third; every
export ends byte-identical.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from feral.storage.log import delta_log, prune
from feral.storage.memory import export, memories
from feral.storage.store import run_write
from feral.sync.ids import fact_id

from .cluster import Cluster
from .simnode import SimNode

DAY_MS = prune.DAY_MS
WINDOW_MS = 30 * DAY_MS
WRITES_PER_DAY = 6


@pytest.fixture
def mesh() -> Iterator[Cluster]:
    cluster = Cluster(3, "mesh")
    yield cluster
    cluster.close()


def remember(node: SimNode, text: str) -> tuple[str, str, str]:
    triple = (node.name, "wrote", text)
    node.commit(memories.remember_fact, triple, now_ms=node.wall())
    return triple


def prune_all(cluster: Cluster, nodes: list[SimNode]) -> None:
    for node in nodes:
        others = [n.node_id for n in cluster.nodes if n is not node]
        run_write(node.conn, prune.apply_prune, paired=others, now_ms=node.wall(),
                  window_ms=WINDOW_MS)  # fmt: skip


def live_and_nuked(node: SimNode) -> tuple[set[str], set[str]]:
    live: set[str] = set()
    dead: set[str] = set()
    for line in export.export_lines(node.conn):
        row = json.loads(line)
        (dead if row["deleted"] else live).add(row["id"])
    return live, dead


def log_size(node: SimNode) -> int:
    return int(node.conn.execute("SELECT count(*) FROM delta_log").fetchone()[0])


@pytest.mark.slow
def test_ninety_days_of_pruning_then_a_device_off_all_along_comes_back_from_a_snapshot(
    mesh: Cluster,
) -> None:
    server, phone, laptop = mesh.nodes
    kept = [remember(laptop, f"before the trip {i}") for i in range(5)]
    doomed = [remember(laptop, f"to be nuked {i}") for i in range(3)]
    mesh.sync_until_quiet(1_000)
    mesh.isolate(laptop)
    laptop.close()
    mesh.edges = [(0, 1)]  # the laptop is off: its links are not dialled
    for row in doomed:
        server.commit(memories.nuke, fact_id(*row))
    nuked = {fact_id(*row) for row in doomed}
    written = 0
    for day in range(90):
        mesh.time.advance(DAY_MS)
        for i in range(WRITES_PER_DAY // 2):
            remember(server, f"day {day} server {i}")
            triple = remember(phone, f"day {day} phone {i}")
            written += 2
            if i == 0 and day % 3 == 0:
                phone.commit(memories.nuke, fact_id(*triple))
                nuked.add(fact_id(*triple))
        mesh.sync_until_quiet(1_000)
        prune_all(mesh, [server, phone])
        for node in (server, phone):
            # Bounded by the window: about 30 days of entries, however long the mesh runs.
            assert log_size(node) <= (WINDOW_MS // DAY_MS + 2) * (WRITES_PER_DAY + 1)
    assert written > 2 * log_size(server)  # 90 days written, about 30 kept
    mesh.edges = [(0, 1), (0, 2), (1, 2)]
    laptop.open()
    mesh.settle(1_000)
    assert _snapshot_taken(laptop)
    live, dead = live_and_nuked(laptop)
    assert {fact_id(*row) for row in kept} <= live
    assert not nuked & live  # no nuked row came back
    assert _same_exports(mesh)
    assert server.vector() == laptop.vector() == phone.vector()


def _snapshot_taken(node: SimNode) -> bool:
    return bool(node.conn.execute("SELECT count(*) FROM log_floor").fetchone()[0])


def _same_exports(cluster: Cluster) -> bool:
    exports = {"".join(export.export_lines(node.conn)) for node in cluster.nodes}
    return len(exports) == 1


@pytest.mark.slow
def test_a_new_device_joins_from_a_snapshot_then_relays_live_writes_to_a_third() -> None:
    cluster = Cluster(2, "chain")
    try:
        server, phone = cluster.nodes
        for i in range(1_200):  # above snapshot_above_entries: a new device gets a snapshot
            remember(server if i % 2 else phone, f"fact {i}")
        remember(phone, "to be nuked")
        phone.commit(memories.nuke, fact_id(phone.name, "wrote", "to be nuked"))
        cluster.sync_until_quiet(1_000)
        tablet = cluster.join(0)
        cluster.settle(1_000)
        assert log_size(tablet) == 0  # it replayed no entry: the rows came as a snapshot
        assert _same_exports(cluster)
        assert tablet.vector() == server.vector()
        watch = cluster.join(len(cluster.nodes) - 1)  # linked with the tablet only
        cluster.settle(1_000)
        remember(tablet, "written on the tablet")
        remember(phone, "written on the phone")
        cluster.settle(1_000)
        assert _same_exports(cluster)
        assert watch.vector() == phone.vector() == server.vector() == tablet.vector()
        counts = delta_log.log_entry_counts
        assert counts(watch.conn) == counts(phone.conn) == counts(server.conn)
    finally:
        cluster.close()
