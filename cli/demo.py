"""``feral demo``: three devices on throw-away homes, offline edits, reconcile, status.

A laptop, a phone and a home server each run a real node with a real ``/sync`` server on a
loopback port. The phone is accept-only behind the home server (it dials out, nobody dials it),
and the laptop never talks to the phone: its edits reach the laptop through the server.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .context import run
from .output import ago, count, echo_table, short_id, shorten
from .status_cells import sync_state_cell

if TYPE_CHECKING:
    from feral.node.node import Node
    from feral.node.serve.service import SyncService
    from feral.node.settings.config import PeerSettings

__all__ = ["demo"]

DEVICES = ("laptop", "phone", "server")


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _pair(home: Path, name: str, peers: list[PeerSettings]) -> None:
    from feral.node.settings.config import load_settings, save_settings, with_peer

    settings = load_settings(home)
    for peer in peers:
        settings = with_peer(settings, peer)
    save_settings(home, dataclasses.replace(settings, name=name))


@contextlib.asynccontextmanager
async def _serving(node: Node, port: int) -> AsyncIterator[SyncService]:
    import asyncio

    from feral.node.serve.service import SyncService

    service = SyncService(node, "127.0.0.1", port)
    ready = asyncio.Event()
    task = asyncio.create_task(service.run(ready.set))
    await asyncio.wait_for(ready.wait(), 10)
    try:
        yield service
    finally:
        assert service.server is not None
        service.server.should_exit = True
        await task


async def _open_all(root: Path) -> dict[str, Node]:
    from feral.node.node import Node  # the nodes and their stores: only when the demo runs

    nodes = {name: await Node.open(root / name) for name in DEVICES}
    for node in nodes.values():
        await node.close()
    return nodes


async def _setup(root: Path, port: int) -> dict[str, Node]:
    """Homes, keys and pairing: laptop and phone dial the server; the server dials nobody."""
    from feral.node.node import Node
    from feral.node.settings.config import PeerSettings

    ids = {name: node.node_id for name, node in (await _open_all(root)).items()}
    url = f"ws://127.0.0.1:{port}"
    _pair(root / "laptop", "laptop", [PeerSettings(ids["server"], url)])
    _pair(root / "phone", "phone", [PeerSettings(ids["server"], url)])
    _pair(root / "server", "server", [PeerSettings(ids["laptop"], None),
                                      PeerSettings(ids["phone"], None)])  # fmt: skip
    return {name: await Node.open(root / name) for name in DEVICES}


async def _round(nodes: dict[str, Node]) -> int:
    """Laptop and phone each run one sync round with the server; returns rows received."""
    from feral.node.links.dial import dial

    total = 0
    for name in ("phone", "laptop", "phone"):
        node = nodes[name]
        for peer in node.settings.sync.peers:
            result = await dial(node, peer, until_quiet=True)
            if result.error:
                raise click.ClickException(f"{name}: {result.error}")
            total += result.received
    return total


async def _offline_edits(nodes: dict[str, Node]) -> str:
    laptop, phone, server = nodes["laptop"], nodes["phone"], nodes["server"]
    shared = await laptop.remember(("user", "doctor_name", "Dr. Chen"))
    click.echo(f"  laptop  remembers  user / doctor_name / Dr. Chen   ({shared['id'][:10]}…)")
    await _round(nodes)
    click.secho("\nAll three go offline and keep working:", bold=True)
    edits = [
        (laptop, ("Alice", "birthday", "May 4")),
        (phone, ("alice", "Birthday", "May 4")),
        (phone, ("user", "favourite_cafe", "Blue Door")),
        (server, ("home", "thermostat", "20 °C at night")),
    ]
    for node, triple in edits:
        row = await node.remember(triple)
        said = " / ".join(triple)
        click.echo(f"  {node.settings.name:<7} remembers  {said:<34} ({row['id'][:10]}…)")
    await laptop.add_episode("planning", "Planned the Lisbon trip with Alice", ["Alice", "Lisbon"])
    click.echo("  laptop  records an episode: Planned the Lisbon trip with Alice")
    await laptop.set_archived(shared["id"], True)
    click.echo("  laptop  forgets   Dr. Chen (archive)")
    await phone.set_archived(shared["id"], True)
    await phone.set_archived(shared["id"], False)
    click.echo("  phone   forgets, then restores Dr. Chen (a later edit of the same row)")
    return str(shared["id"])


async def _tour(root: Path) -> None:
    port = _free_port()
    nodes = await _setup(root, port)
    try:
        click.secho("Three devices, each with its own node:", bold=True)
        for name, node in nodes.items():
            click.echo(f"  {name:<7} {node.node_id}")
        async with _serving(nodes["server"], port):
            shared = await _offline_edits(nodes)
            click.secho("\nBack online: laptop and phone sync with the server", bold=True)
            while received := await _round(nodes):
                click.echo(f"  round: {received} row(s) applied")
            await _report(nodes, shared)
    finally:
        for node in nodes.values():
            await node.close()


async def _report(nodes: dict[str, Node], shared: str) -> None:
    from feral.node.links.status import sync_status

    laptop = nodes["laptop"]
    status = await sync_status(laptop)
    click.secho("\nlaptop: feral sync status", bold=True)
    now = status["now_ms"]
    echo_table(
        [(p["name"] or short_id(p["node_id"]), p["url"] or "(accept only)",
          "up now" if p["link_up"] else f"last up {ago(p['last_seen_at'], now)}",
          count(p["backlog"]), sync_state_cell(p, now))
         for p in status["peers"]],
        ("peer", "url", "link", "backlog", "in sync"),
    )  # fmt: skip
    click.secho("\nExports (the convergence oracle):", bold=True)
    digests = {}
    for name, node in nodes.items():
        digests[name] = await node.state_digest()
        rows = len(await node.export_lines())
        click.echo(f"  {name:<7} {rows} rows  sha256 {digests[name][:16]}…")
    same = len(set(digests.values())) == 1
    click.secho(f"  identical: {'yes' if same else 'NO'}", fg="green" if same else "red")
    await laptop.embed_queued()  # what a command that wrote, or a running serve, would do
    birthday = await laptop.search("Alice birthday", top_k=3)
    click.secho("\nlaptop: feral memory search 'Alice birthday'", bold=True)
    echo_table([(f"{h['score']:.2f}", h["tier"], shorten(h["content"], 50))
                for h in birthday.results], ("score", "tier", "content"))  # fmt: skip
    meaning = await laptop.search("vacation travel plans", top_k=2)
    click.secho(
        f"\nlaptop: feral memory search 'vacation travel plans' ({meaning.strategy}: "
        "no word in common, found by meaning)",
        bold=True,
    )
    echo_table([(f"{h['score']:.2f}", h["tier"], shorten(h["content"], 50))
                for h in meaning.results], ("score", "tier", "content"))  # fmt: skip
    row = await laptop.get(shared)
    if row.get("archived"):
        verdict = "archived: the laptop's earlier archive beat the phone's later restore (wrong)"
    else:
        verdict = "live: the phone's later restore won (LWW)"
    click.echo(f"\nDr. Chen on the laptop is {verdict}.")
    if not same:
        raise click.ClickException("the devices did not converge")


@click.command()
def demo() -> None:
    """Three devices: offline edits, then sync through a home server; status and exports."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="feral-demo-") as tmp:
        run(_tour(Path(tmp)))
