"""``feral serve`` in-process: the /sync server, dialers, live sync and settings reload."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from websockets.typing import Origin

from feral.node.links.peer import PeerLink
from feral.node.node import Node
from feral.node.serve import service as service_module
from feral.node.serve.service import dial, sync_url
from feral.node.settings.config import save_settings, without_peer
from feral.sync.codec import decode_message
from feral.sync.messages import Hello
from feral.sync.types import NodeId

from .support import Mesh, assert_converged, pair, peer_row, wait_until


@pytest.fixture
async def mesh(tmp_path: Path) -> AsyncIterator[Mesh]:
    mesh = Mesh(tmp_path)
    yield mesh
    await mesh.aclose()


async def holds(node: Node, row_id: str) -> bool:
    return any(row_id in line for line in await node.export_lines())


def linked(node: Node, peer: NodeId) -> bool:
    return peer in node.links


def hello_of(frame: str | bytes) -> Hello:
    """A server's first frame, which must be its Hello."""
    assert isinstance(frame, bytes)
    message = decode_message(frame)
    assert isinstance(message, Hello)
    return message


async def raw_hello(url: str) -> Hello:
    """Connect as a bare WebSocket client and read the server's first frame."""
    async with connect(sync_url(url), proxy=None, compression=None) as ws:
        return hello_of(await ws.recv())


# sync_url


@pytest.mark.parametrize(
    ("given", "endpoint"),
    [
        ("ws://127.0.0.1:9090", "ws://127.0.0.1:9090/sync"),
        ("ws://127.0.0.1:9090/", "ws://127.0.0.1:9090/sync"),
        ("wss://laptop.local:9090", "wss://laptop.local:9090/sync"),
        ("ws://127.0.0.1:9090/sync", "ws://127.0.0.1:9090/sync"),
        ("ws://host:1/feral/sync?x=1", "ws://host:1/feral/sync?x=1"),
        ("ws://host:1#frag", "ws://host:1/sync"),
    ],
)
def test_sync_url_adds_the_sync_path_only_when_none_is_given(given: str, endpoint: str) -> None:
    assert sync_url(given) == endpoint


# Live sync


async def live_pair(mesh: Mesh) -> tuple[Node, Node]:
    """``a`` dials ``b``; ``b`` accepts ``a`` without dialling it."""
    mesh.add("a", "b")
    mesh.pair("a", mesh.peer("b"))
    mesh.pair("b", mesh.peer("a", dial=False))
    return await mesh.open("a"), await mesh.open("b")


async def test_a_running_dialer_connects_and_catches_up(mesh: Mesh) -> None:
    node_a, node_b = await live_pair(mesh)
    row = await node_b.remember(("b", "wrote", "before"))
    async with mesh.serve(node_b, "b"), mesh.serve(node_a, "a"):
        await wait_until(lambda: holds(node_a, row["id"]), "a to catch up with b")
        await wait_until(lambda: linked(node_b, node_a.node_id), "b to see a's link")
    await assert_converged(node_a, node_b)


async def test_live_writes_reach_the_peer_in_both_directions(mesh: Mesh) -> None:
    node_a, node_b = await live_pair(mesh)
    async with mesh.serve(node_b, "b"), mesh.serve(node_a, "a"):
        await wait_until(lambda: linked(node_a, node_b.node_id), "a's dialer to connect")
        await wait_until(lambda: linked(node_b, node_a.node_id), "b to accept a")
        from_a = await node_a.remember(("a", "wrote", "live"))
        await wait_until(lambda: holds(node_b, from_a["id"]), "a's write to reach b")
        from_b = await node_b.add_episode("s", "b wrote live")
        await wait_until(lambda: holds(node_a, from_b["id"]), "b's write to reach a")
        await node_a.set_archived(from_a["id"], True)
        await wait_until(
            lambda: _archived(node_b, from_a["id"]), "a's forget to reach b"
        )  # fmt: skip
    await assert_converged(node_a, node_b)


async def _archived(node: Node, row_id: str) -> bool:
    return bool((await node.get(row_id))["archived"])


async def test_a_write_by_another_process_on_the_same_home_is_pushed(mesh: Mesh) -> None:
    node_a, node_b = await live_pair(mesh)
    async with mesh.serve(node_b, "b"), mesh.serve(node_a, "a"):
        await wait_until(lambda: linked(node_a, node_b.node_id), "a's dialer to connect")
        cli = await mesh.open("a")  # its own connection, as `feral memory remember` has
        row = await cli.remember(("written", "by", "the cli"))
        await cli.close()
        await wait_until(lambda: holds(node_b, row["id"]), "the cli's write to reach b")
    await assert_converged(node_a, node_b)


# Refusals before the upgrade


async def test_a_connection_with_an_origin_header_is_refused(mesh: Mesh) -> None:
    mesh.add("b")
    node_b = await mesh.open("b")
    async with mesh.serve(node_b, "b"):
        with pytest.raises(InvalidStatus) as refused:
            async with connect(
                sync_url(mesh.url("b")), origin=Origin("http://evil.example"), proxy=None
            ):  # fmt: skip
                pass
        assert refused.value.response.status_code == 403
        assert (await raw_hello(mesh.url("b"))).node_id == node_b.node_id


async def test_a_connection_beyond_max_unauthenticated_is_refused(mesh: Mesh) -> None:
    mesh.add("b")
    node_b = await mesh.open("b")
    sync = dataclasses.replace(node_b.settings.sync, max_unauthenticated=1)
    node_b.settings = dataclasses.replace(node_b.settings, sync=sync)
    url = sync_url(mesh.url("b"))
    async with mesh.serve(node_b, "b") as service:
        async with connect(url, proxy=None, compression=None) as first:
            assert hello_of(await first.recv()).node_id == node_b.node_id
            assert service.guard.pending == 1 and service.server_links == 0
            with pytest.raises(InvalidStatus) as refused:
                async with connect(url, proxy=None, compression=None):
                    pass
            assert refused.value.response.status_code == 403
        await wait_until(lambda: service.guard.pending == 0, "the first connection to end")
        assert (await raw_hello(mesh.url("b"))).node_id == node_b.node_id


async def test_unauthenticated_connections_take_no_peer_slot(mesh: Mesh) -> None:
    mesh.add("a", "b")
    mesh.pair("b", mesh.peer("a", dial=False))
    mesh.pair("a", mesh.peer("b"))
    node_a, node_b = await mesh.open("a"), await mesh.open("b")
    url = sync_url(mesh.url("b"))
    async with mesh.serve(node_b, "b") as service, contextlib.AsyncExitStack() as stack:
        for _ in range(service_module.MAX_PEERS + 4):
            ws = await stack.enter_async_context(connect(url, proxy=None, compression=None))
            assert hello_of(await ws.recv()).node_id == node_b.node_id
        assert service.server_links == 0
        result = await dial(node_a, mesh.peer("b"), until_quiet=True)
        assert result.error is None, result.error


async def test_a_peer_beyond_max_peers_is_refused_as_busy_after_it_authenticates(
    mesh: Mesh, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service_module, "MAX_PEERS", 1)
    mesh.add("a", "b", "c")
    mesh.pair("b", mesh.peer("a", dial=False), mesh.peer("c", dial=False))
    for name in ("a", "c"):
        mesh.pair(name, mesh.peer("b"))
    node_a, node_b, node_c = await mesh.open("a"), await mesh.open("b"), await mesh.open("c")
    async with mesh.serve(node_b, "b") as service:
        live = asyncio.create_task(dial(node_a, mesh.peer("b"), until_quiet=False))
        await wait_until(lambda: service.server_links == 1, "a's link to come up")
        refused = await dial(node_c, mesh.peer("b"), until_quiet=True)
        assert refused.error_code == "busy", refused
        assert "too many peers" in (refused.error or "")
        live.cancel()
        await asyncio.gather(live, return_exceptions=True)
        await wait_until(lambda: service.server_links == 0, "a's link to end")
        assert (await dial(node_c, mesh.peer("b"), until_quiet=True)).error is None


# Settings reload


async def test_pairing_a_peer_while_serving_starts_a_dialer(mesh: Mesh) -> None:
    mesh.add("a", "b")
    mesh.pair("b", mesh.peer("a", dial=False))
    node_a, node_b = await mesh.open("a"), await mesh.open("b")
    row = await node_b.remember(("b", "wrote", "this"))
    async with mesh.serve(node_b, "b"), mesh.serve(node_a, "a"):
        assert node_a.links == {}
        pair(mesh.home("a"), mesh.peer("b"))
        await wait_until(lambda: linked(node_a, node_b.node_id), "the new dialer to connect")
        await wait_until(lambda: holds(node_a, row["id"]), "a to catch up")
        assert (await peer_row(node_a, node_b.node_id))["url"] == mesh.url("b")


async def test_pairing_on_the_server_while_it_serves_lets_the_peer_in(mesh: Mesh) -> None:
    mesh.add("a", "b")
    mesh.pair("a", mesh.peer("b"))
    node_a, node_b = await mesh.open("a"), await mesh.open("b")
    async with mesh.serve(node_b, "b"):
        refused = await dial(node_a, mesh.peer("b"), until_quiet=True)
        assert refused.error_code == "not_paired"
        pair(mesh.home("b"), mesh.peer("a", dial=False))
        await wait_until(lambda: node_b.is_paired(node_a.node_id), "b to reload its settings")
        result = await dial(node_a, mesh.peer("b"), until_quiet=True)
    assert result.error is None, result.error


async def test_unpairing_a_connected_peer_ends_its_link(mesh: Mesh) -> None:
    node_a, node_b = await live_pair(mesh)
    async with mesh.serve(node_b, "b"), mesh.serve(node_a, "a"):
        await wait_until(lambda: linked(node_b, node_a.node_id), "b to accept a")
        save_settings(mesh.home("b"), without_peer(node_b.settings, node_a.node_id))
        await wait_until(lambda: not node_b.is_paired(node_a.node_id), "b to reload its settings")
        secret = await node_b.remember(("b", "wrote", "after unpairing a"))
        await wait_until(lambda: not linked(node_b, node_a.node_id), "b to drop a's link")
        assert not await holds(node_a, secret["id"])


async def test_unpairing_a_dialled_peer_stops_its_dialer(mesh: Mesh) -> None:
    node_a, node_b = await live_pair(mesh)
    async with mesh.serve(node_b, "b"), mesh.serve(node_a, "a"):
        await wait_until(lambda: linked(node_a, node_b.node_id), "a's dialer to connect")
        save_settings(mesh.home("a"), without_peer(node_a.settings, node_b.node_id))
        await wait_until(lambda: not linked(node_a, node_b.node_id), "a to hang up")
        await wait_until(lambda: not linked(node_b, node_a.node_id), "b to see a go")
        later = await node_a.remember(("a", "wrote", "after unpairing b"))
        await asyncio.sleep(2 * service_module.WATCH_INTERVAL_S)  # a watcher tick or two
        assert node_a.links == {}
        assert not await holds(node_b, later["id"])


async def test_a_dialer_reconnects_after_the_server_restarts(mesh: Mesh) -> None:
    node_a, node_b = await live_pair(mesh)
    async with mesh.serve(node_a, "a"):
        async with mesh.serve(node_b, "b"):
            await wait_until(lambda: linked(node_a, node_b.node_id), "a's dialer to connect")
        await wait_until(lambda: not linked(node_a, node_b.node_id), "a to notice b is gone")
        offline = await node_b.remember(("b", "wrote", "while a was cut off"))
        async with mesh.serve(node_b, "b"):
            await wait_until(lambda: holds(node_a, offline["id"]), "a to reconnect and catch up")
    await assert_converged(node_a, node_b)


# One link per pair


async def test_two_nodes_that_dial_each_other_keep_one_link(mesh: Mesh) -> None:
    """Whoever dialled first, one link stays: a dialler waits while the peer's link is up,
    and if both opened at once the greater id's dialled link yields (docs/PROTOCOL.md §7)."""
    mesh.add("a", "b")
    mesh.pair("a", mesh.peer("b"))
    mesh.pair("b", mesh.peer("a"))
    node_a, node_b = await mesh.open("a"), await mesh.open("b")

    def settled() -> bool:
        here, there = node_a.links.get(node_b.node_id), node_b.links.get(node_a.node_id)
        if not isinstance(here, PeerLink) or not isinstance(there, PeerLink):
            return False
        dialled = [end.handler.expected is not None for end in (here, there)]
        return dialled.count(True) == 1 and not node_a.standby and not node_b.standby

    async with mesh.serve(node_a, "a"), mesh.serve(node_b, "b"):
        await wait_until(settled, "one link between the pair")
        row = await node_b.remember(("b", "wrote", "live"))
        await wait_until(lambda: holds(node_a, row["id"]), "a live push over the one link")
        await wait_until(settled, "still one link after the push")
