"""A new device from a snapshot, with real ``feral serve`` processes on loopback (issue 16).

The server holds more log entries than ``sync.snapshot_above_entries``: an empty laptop that
syncs with it takes the rows as a snapshot (its log stays empty), with the server's vector and
export; then it serves a phone that joins empty in turn, and relays a write both ways.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from feral.node.settings.config import load_settings, save_settings

from .servers import FeralNode, Mesh, pair

FACTS = 40


def _snapshot_above(node: FeralNode, entries: int) -> None:
    settings = load_settings(node.home)
    sync = dataclasses.replace(settings.sync, snapshot_above_entries=entries)
    save_settings(node.home, dataclasses.replace(settings, sync=sync))


def _serve(node: FeralNode) -> None:
    node.start()
    node.wait_ready(timeout=180)  # a loaded machine starts a server slowly


def _sync_now(node: FeralNode) -> None:
    result = node.run("sync", "now", "--json")
    assert all(link["ok"] for link in json.loads(result.stdout)), result.stdout


def _log_entries(node: FeralNode) -> int:
    return int(node.query("SELECT count(*) FROM delta_log")[0][0])


@pytest.mark.slow
def test_an_empty_device_takes_a_snapshot_then_serves_one_and_relays_live_writes(
    mesh: Mesh,
) -> None:
    server, laptop, phone = mesh.add("server", "laptop", "phone")
    pair(server, laptop, dial=False)
    pair(laptop, server, dial=True)
    pair(laptop, phone, dial=False)
    pair(phone, laptop, dial=True)
    for node in (server, laptop):
        _snapshot_above(node, 10)
    lines = [f"the shelf in room {i} holds box {i}" for i in range(FACTS)]
    path = server.home.parent / "facts.txt"
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    server.cli("memory", "import", str(path))
    nuked = json.loads(server.cli("memory", "list", "--json"))[0]["id"]
    server.cli("memory", "nuke", nuked, "--yes")
    _serve(server)
    _sync_now(laptop)
    assert laptop.export() == server.export()
    assert _log_entries(laptop) == 0  # no entry replayed: the rows came as a snapshot
    assert laptop.status()["vector"] == server.status()["vector"]
    assert '"deleted":true' in laptop.export()  # the nuke's tombstone came with it
    _serve(laptop)
    _sync_now(phone)
    assert phone.export() == laptop.export()
    phone.cli("memory", "remember", "the spare key is with the neighbour")
    _sync_now(phone)
    _sync_now(laptop)
    assert server.export() == laptop.export() == phone.export()
    assert "the spare key" in server.export()
