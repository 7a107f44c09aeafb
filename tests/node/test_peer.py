"""One link between two real nodes over a real loopback WebSocket (node/links/peer.py via dial)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection

from feral.node.links import dial as links_dial
from feral.node.links.peer import FailureLog
from feral.node.node import Node
from feral.node.serve.service import dial
from feral.node.settings.config import PeerSettings
from feral.storage.link import peers as peer_status
from feral.sync.types import NodeId

from .support import HOUR, ManualClock, Mesh, assert_converged, now_ms, peer_row


@pytest.fixture
async def mesh(tmp_path: Path) -> AsyncIterator[Mesh]:
    mesh = Mesh(tmp_path)
    yield mesh
    await mesh.aclose()


async def recorded(node: Node, peer: NodeId) -> dict[str, Any]:
    """What ``node`` stored about ``peer`` (local-only peer status)."""
    statuses: dict[NodeId, dict[str, Any]] = await node.store.read(peer_status.peer_statuses)
    return statuses.get(peer, {})


async def test_one_round_converges_two_nodes_both_ways(mesh: Mesh) -> None:
    a, b = mesh.add("a", "b")
    mesh.pair("a", mesh.peer("b"))
    mesh.pair("b", mesh.peer("a", dial=False))
    node_a, node_b = await mesh.open("a"), await mesh.open("b")
    for n in range(5):
        await node_a.remember(("a", "wrote", str(n)))
    fact = await node_b.remember(("b", "wrote", "one"))
    await node_b.add_episode("s", "b's episode")
    await node_b.set_archived(fact["id"], True)

    async with mesh.serve(node_b, "b"):
        result = await dial(node_a, node_a.settings.sync.peers[0], until_quiet=True)

    assert (result.error, result.error_code) == (None, None)
    assert result.peer == b
    assert result.quiet
    assert result.received == 3
    await assert_converged(node_a, node_b)
    assert (await peer_row(node_a, b))["in_sync"] is True
    assert (await peer_row(node_b, a))["in_sync"] is True
    assert node_a.links == {} and node_b.links == {}


async def test_a_second_round_with_nothing_new_moves_nothing(mesh: Mesh) -> None:
    _, b = mesh.add("a", "b")
    mesh.pair("a", mesh.peer("b"))
    mesh.pair("b", mesh.peer("a", dial=False))
    node_a, node_b = await mesh.open("a"), await mesh.open("b")
    await node_b.remember(("b", "wrote", "one"))
    async with mesh.serve(node_b, "b"):
        first = await dial(node_a, mesh.peer("b"), until_quiet=True)
        second = await dial(node_a, mesh.peer("b"), until_quiet=True)
    assert (first.received, second.received) == (1, 0)
    assert second.error is None
    await assert_converged(node_a, node_b)


async def test_writes_relay_through_a_server_that_both_ends_dial(mesh: Mesh) -> None:
    # TEST-CATALOG 7: A and C never connect; C gets A's writes through the server.
    mesh.add("a", "server", "c")
    mesh.pair("a", mesh.peer("server"))
    mesh.pair("c", mesh.peer("server"))
    mesh.pair("server", mesh.peer("a", dial=False), mesh.peer("c", dial=False))
    node_a, server, node_c = [await mesh.open(n) for n in ("a", "server", "c")]
    await node_a.remember(("a", "wrote", "this"))
    await node_c.remember(("c", "wrote", "that"))
    await server.remember(("server", "wrote", "too"))

    async with mesh.serve(server, "server"):
        for node in (node_a, node_c, node_a):
            result = await dial(node, mesh.peer("server"), until_quiet=True)
            assert result.error is None, result.error

    await assert_converged(node_a, server, node_c)
    assert set(await node_c.version_vector()) == {node_a.node_id, server.node_id, node_c.node_id}


async def test_a_server_that_has_not_paired_the_dialer_refuses_it(mesh: Mesh) -> None:
    a, b = mesh.add("a", "b")
    mesh.pair("a", mesh.peer("b"))
    node_a, node_b = await mesh.open("a"), await mesh.open("b")
    await node_b.remember(("b", "private", "fact"))

    async with mesh.serve(node_b, "b"):
        result = await dial(node_a, mesh.peer("b"), until_quiet=True)

    assert result.error_code == "not_paired"
    assert a in (result.error or "")
    assert (await recorded(node_a, b))["last_error"] == result.error
    assert (await peer_row(node_a, b))["last_error"] == result.error
    assert await node_a.export_lines() == []
    assert await recorded(node_b, a) == {}


async def test_a_dialer_that_has_not_paired_the_server_refuses_it(mesh: Mesh) -> None:
    a, b = mesh.add("a", "b")
    mesh.pair("b", mesh.peer("a", dial=False))
    node_a, node_b = await mesh.open("a"), await mesh.open("b")
    await node_b.remember(("b", "private", "fact"))

    async with mesh.serve(node_b, "b"):
        result = await dial(node_a, mesh.peer("b"), until_quiet=True)

    assert result.error_code == "not_paired"
    assert b in (result.error or "")
    assert (await recorded(node_a, b))["last_error"] == result.error
    assert await node_a.export_lines() == []
    assert (await recorded(node_b, a)).get("reachable", False) is False


async def test_a_url_answered_by_another_node_is_refused_as_the_wrong_peer(mesh: Mesh) -> None:
    _, b, c = mesh.add("a", "b", "c")
    # a knows c (accept-only) and believes b lives at c's address.
    mesh.pair("a", PeerSettings(b, mesh.url("c")), mesh.peer("c", dial=False))
    mesh.pair("c", mesh.peer("a", dial=False))
    node_a, node_c = await mesh.open("a"), await mesh.open("c")
    await node_c.remember(("c", "is", "not b"))

    async with mesh.serve(node_c, "c"):
        result = await dial(node_a, node_a.settings.sync.peers[0], until_quiet=True)

    assert result.error_code == "wrong_peer"
    assert c in (result.error or "") and b in (result.error or "")
    assert (await recorded(node_a, b))["last_error"] == result.error
    assert await node_a.export_lines() == []


async def test_a_wall_clock_an_hour_ahead_is_refused_at_the_handshake(mesh: Mesh) -> None:
    _, b = mesh.add("a", "b")
    mesh.pair("a", mesh.peer("b"))
    mesh.pair("b", mesh.peer("a", dial=False))
    node_a = await mesh.open("a")
    node_b = await mesh.open("b", now_ms=ManualClock(now_ms() + HOUR))
    await node_a.remember(("a", "wrote", "this"))
    await node_b.remember(("b", "wrote", "in the future"))
    before_a = (await node_a.export_lines(), await node_a.version_vector())
    before_b = (await node_b.export_lines(), await node_b.version_vector())

    async with mesh.serve(node_b, "b"):
        result = await dial(node_a, mesh.peer("b"), until_quiet=True)

    assert result.error_code == "clock_skew"
    assert "clock skew" in (result.error or "")
    assert (result.received, result.sent) == (0, 0)
    assert (await node_a.export_lines(), await node_a.version_vector()) == before_a
    assert (await node_b.export_lines(), await node_b.version_vector()) == before_b
    assert "clock skew" in (await peer_row(node_a, b))["last_error"]
    # The refusing server counts it too, under the paired id the Hello named (DESIGN §5).
    a = node_a.node_id
    assert "clock skew" in ((await peer_row(node_b, a))["last_error"] or "")


async def test_dialling_a_port_nobody_listens_on_is_unreachable(mesh: Mesh) -> None:
    _, b = mesh.add("a", "b")
    mesh.pair("a", mesh.peer("b"))
    node_a = await mesh.open("a")
    result = await dial(node_a, mesh.peer("b"), until_quiet=True)
    assert result.error_code == "unreachable"
    row = await peer_row(node_a, b)
    assert row["reachable"] is False
    assert row["last_error"] == result.error
    assert row["errors"] == 1


class _ClosedBeforeTheHandshake(ClientConnection):
    """A connection whose socket closes as soon as it opens, before the opening handshake is
    sent: what a dial meets when the peer drops the connection at that instant (a server
    stopping, or closing a duplicate link)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        transport.abort()


async def test_a_connection_closed_before_the_handshake_is_unreachable_not_a_crash(
    mesh: Mesh, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, b = mesh.add("a", "b")
    mesh.pair("a", mesh.peer("b"))
    node_a = await mesh.open("a")
    accepted: list[asyncio.StreamWriter] = []
    server = await asyncio.start_server(lambda r, w: accepted.append(w), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    peer = dataclasses.replace(mesh.peer("b"), url=f"ws://127.0.0.1:{port}")

    opening = links_dial.connect

    def closing(uri: str, **options: Any) -> links_dial.connect:
        return opening(uri, **{**options, "create_connection": _ClosedBeforeTheHandshake})

    monkeypatch.setattr(links_dial, "connect", closing)
    try:
        result = await dial(node_a, peer, until_quiet=False, failures=FailureLog())
    finally:
        for writer in accepted:
            writer.close()
        server.close()
        await server.wait_closed()
    assert result.error_code == "unreachable", result
    assert (await peer_row(node_a, b))["reachable"] is False
