"""``kill -9`` of a ``feral serve`` in the middle of taking a snapshot (TEST-CATALOG 18).

test_kill_processes.py keeps every catch-up on the log; here an empty receiver takes the
sender's rows as a snapshot, and its server is SIGKILLed once some pages have landed. Each
page is applied in one transaction and only the final one moves the vector (docs/REPLICATION.md
§6, "Pruning and snapshots"), so the killed store is whole, still asks for everything, and
the next sync sends the snapshot again: the two exports end byte-identical.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
import sqlean

from feral.node.settings.config import load_settings, save_settings

from .helpers import turn_off_embeddings
from .servers import FeralNode, Mesh, pair, wait_until

FACTS = 4_000
"""Four snapshot pages of facts (a page holds at most 1,000 rows)."""
ROUNDS = 3


def _quiet(node: FeralNode) -> None:
    """No embedding model, and a snapshot for any empty peer once the log holds 10 entries."""
    turn_off_embeddings(node.home)
    settings = load_settings(node.home)
    sync = dataclasses.replace(settings.sync, snapshot_above_entries=10)
    save_settings(node.home, dataclasses.replace(settings, sync=sync))
    node.cli("memory", "stats")


def _integrity(node: FeralNode) -> list[tuple[str]]:
    conn = sqlean.connect(str(node.database), timeout=10)
    try:
        return list(conn.execute("PRAGMA integrity_check").fetchall())
    finally:
        conn.close()


def _kill_mid_snapshot(sender: FeralNode, receiver: FeralNode) -> bool:
    """Start the receiver, let the sender's ``sync now`` dial it, SIGKILL the receiver's server
    once a page more has landed; returns whether the kill fell inside the snapshot."""
    receiver.start()
    receiver.wait_ready(timeout=180)
    held = receiver.count()
    with sender.spawn("sync", "now") as sync:
        wait_until(lambda: sync.poll() is not None or receiver.count() > held, 120, 0.005)
        receiver.kill()
        _, err = sync.communicate(timeout=120)
    assert "Traceback" not in err, err
    assert _integrity(receiver) == [("ok",)]
    partway = held < receiver.count() < sender.count()
    if partway:  # only the final page moves the vector: it still asks for everything
        assert receiver.query("SELECT count(*) FROM version_vector")[0][0] == 0
    return partway


@pytest.mark.slow
def test_kill_9_of_a_server_taking_a_snapshot_loses_nothing_and_converges(mesh: Mesh) -> None:
    sender, receiver = mesh.add("sender", "receiver")
    for node in (sender, receiver):
        _quiet(node)
    pair(receiver, sender, dial=False)
    pair(sender, receiver, dial=True)
    path = sender.home.parent / "facts.txt"
    path.write_text("".join(f"box {i} is on shelf {i % 97}\n" for i in range(FACTS)))
    sender.cli("memory", "import", str(path))
    nuked = json.loads(sender.cli("memory", "list", "--json"))[0]["id"]
    sender.cli("memory", "nuke", nuked, "--yes")
    partway = sum(_kill_mid_snapshot(sender, receiver) for _ in range(ROUNDS))
    assert partway >= 1, "no kill fell inside the snapshot"
    mesh.start(receiver)
    result = sender.run("sync", "now", "--json")
    assert all(link["ok"] for link in json.loads(result.stdout)), result.stdout
    assert receiver.export() == sender.export()
    assert receiver.status()["vector"] == sender.status()["vector"]
    assert receiver.query("SELECT count(*) FROM delta_log")[0][0] == 0  # rows, not entries
    assert '"deleted":true' in receiver.export()
