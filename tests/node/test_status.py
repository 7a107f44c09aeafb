"""``feral sync status`` as the node computes it (node/links/status.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from feral.node.links.status import peer_rows, sync_status
from feral.node.node import Node
from feral.node.serve.service import dial
from feral.storage.log import delta_log
from feral.storage.memory import export

from .support import SECOND, ManualClock, Mesh, now_ms


@pytest.fixture
async def mesh(tmp_path: Path) -> AsyncIterator[Mesh]:
    mesh = Mesh(tmp_path)
    yield mesh
    await mesh.aclose()


async def paired(mesh: Mesh, clock: ManualClock) -> tuple[Node, Node]:
    """``a`` dials ``b``, ``b`` accepts ``a``; both read the same manual wall clock."""
    mesh.add("a", "b")
    mesh.pair("a", mesh.peer("b"))
    mesh.pair("b", mesh.peer("a", dial=False))
    return await mesh.open("a", now_ms=clock), await mesh.open("b", now_ms=clock)


async def test_status_names_the_node_its_clock_and_its_state_digest(mesh: Mesh) -> None:
    clock = ManualClock(now_ms())
    node_a, _ = await paired(mesh, clock)
    row = await node_a.remember(("a", "wrote", "this"))
    status = await sync_status(node_a)
    assert status["node_id"] == node_a.node_id
    assert status["name"] == node_a.settings.name
    assert status["hlc"] == row["hlc"] == await node_a.store.read(delta_log.clock_high_water)
    assert status["state_digest"] == await node_a.store.read(export.state_digest)
    assert status["vector"] == {node_a.node_id: row["hlc"]}
    assert status["max_clock_skew_ms"] == node_a.settings.sync.max_clock_skew_ms


async def test_before_any_sync_a_peer_lacks_our_whole_log(mesh: Mesh) -> None:
    clock = ManualClock(now_ms())
    node_a, node_b = await paired(mesh, clock)
    for n in range(3):
        await node_a.remember(("a", "wrote", str(n)))

    [row] = (await sync_status(node_a))["peers"]
    assert row["node_id"] == node_b.node_id
    assert row["url"] == mesh.url("b")
    assert row["reachable"] is False
    assert row["last_sync_at"] is None
    assert row["hlc_lag_ms"] is None
    assert row["backlog"] == 3
    assert row["in_sync"] is False
    assert row["last_error"] is None
    assert row["errors"] == 0
    [accept_only] = await peer_rows(node_b)
    assert accept_only["url"] is None
    assert accept_only["backlog"] == 0
    assert accept_only["in_sync"] is False


async def test_after_a_round_both_sides_show_the_peer_in_sync(mesh: Mesh) -> None:
    clock = ManualClock(now_ms())
    node_a, node_b = await paired(mesh, clock)
    for n in range(3):
        await node_a.remember(("a", "wrote", str(n)))
    await node_b.remember(("b", "wrote", "one"))
    clock.advance(5 * SECOND)

    async with mesh.serve(node_b, "b"):
        result = await dial(node_a, mesh.peer("b"), until_quiet=True)
    assert result.error is None, result.error

    status_a, status_b = await sync_status(node_a), await sync_status(node_b)
    assert status_a["state_digest"] == status_b["state_digest"]
    assert status_a["hlc"] == status_b["hlc"]
    for row, name in ((status_a["peers"][0], "b"), (status_b["peers"][0], "a")):
        assert row["node_id"] == mesh.ids[name]
        # The round's link ended with it: reachable means a link up now, so it says when.
        assert row["reachable"] is False and row["link_up"] is False
        assert row["last_seen_at"] == clock.now
        assert row["last_sync_at"] == clock.now
        assert row["hlc_lag_ms"] == 0
        assert row["backlog"] == 0
        assert row["in_sync"] is True
        assert row["last_error"] is None
        assert row["encrypted"] is False
        assert row["clock_offset_ms"] == 0
    assert status_a["peers"][0]["rows_received"] == 1
    assert status_b["peers"][0]["rows_received"] == 3


async def test_a_peer_with_nothing_to_send_is_in_sync_once_it_took_our_rows(mesh: Mesh) -> None:
    # Its CaughtUp left before our pages arrived: only its acks say it now holds them.
    clock = ManualClock(now_ms())
    node_a, node_b = await paired(mesh, clock)
    for n in range(3):
        await node_a.remember(("a", "wrote", str(n)))
    async with mesh.serve(node_b, "b"):
        result = await dial(node_a, mesh.peer("b"), until_quiet=True)
    assert result.error is None, result.error

    [row] = (await sync_status(node_a))["peers"]
    assert (row["backlog"], row["in_sync"], row["hlc_lag_ms"]) == (0, True, 0)
    [row] = (await sync_status(node_b))["peers"]
    assert (row["backlog"], row["in_sync"]) == (0, True)


async def test_a_write_after_the_round_shows_as_backlog_and_lag(mesh: Mesh) -> None:
    clock = ManualClock(now_ms())
    node_a, node_b = await paired(mesh, clock)
    await node_a.remember(("a", "wrote", "first"))
    async with mesh.serve(node_b, "b"):
        await dial(node_a, mesh.peer("b"), until_quiet=True)
    clock.advance(7 * SECOND)
    await node_a.remember(("a", "wrote", "second"))

    [row] = (await sync_status(node_a))["peers"]
    assert row["backlog"] == 1
    assert row["in_sync"] is False
    assert row["hlc_lag_ms"] == 7 * SECOND


async def test_a_failed_dial_is_recorded_as_the_last_error(mesh: Mesh) -> None:
    clock = ManualClock(now_ms())
    node_a, _ = await paired(mesh, clock)
    result = await dial(node_a, mesh.peer("b"), until_quiet=True)  # b is not serving
    [row] = (await sync_status(node_a))["peers"]
    assert row["reachable"] is False
    assert row["last_error"] == result.error
    assert row["errors"] == 1


def counting_log_scans(conn: Any, scans: list[str]) -> None:
    """Record every statement that counts delta-log entries (the backlog's cost)."""
    conn.set_trace_callback(
        lambda sql: scans.append(sql) if "count(*) FROM delta_log" in sql else None
    )


async def test_a_peer_whose_backlog_is_recorded_costs_no_count_of_the_log(mesh: Mesh) -> None:
    clock = ManualClock(now_ms())
    node_a, node_b = await paired(mesh, clock)
    await node_a.remember(("a", "wrote", "one"))
    await node_b.remember(("b", "wrote", "one"))
    async with mesh.serve(node_b, "b"):
        assert (await dial(node_a, mesh.peer("b"), until_quiet=True)).error is None

    scans: list[str] = []
    await node_a.store.read(counting_log_scans, scans)
    try:
        [row] = await peer_rows(node_a)
    finally:
        await node_a.store.read(lambda conn: conn.set_trace_callback(None))
    assert (row["backlog"], row["in_sync"]) == (0, True)
    assert scans == []  # in sync: nothing above the peer's vector, and no whole-log count


async def test_a_peer_never_met_is_counted_once_however_many_peers_there_are(mesh: Mesh) -> None:
    mesh.add("a", "b", "c", "d")
    for name in ("b", "c", "d"):
        mesh.pair("a", mesh.peer(name))
    node_a = await mesh.open("a")
    await node_a.remember(("a", "wrote", "one"))

    scans: list[str] = []
    await node_a.store.read(counting_log_scans, scans)
    try:
        rows = await peer_rows(node_a)
    finally:
        await node_a.store.read(lambda conn: conn.set_trace_callback(None))
    assert [row["backlog"] for row in rows] == [1, 1, 1]
    assert len(scans) == 1  # one origin, counted once for all three unmet peers
