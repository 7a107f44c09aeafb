"""A truthful ``feral sync status``, with real ``feral serve`` processes on loopback (issue 11).

``sync status`` usually runs as a CLI process beside the device's own ``feral serve``: what it
says about a link (up now, or when it last was), the last error and its time, the backlogs each
way, the progress of a catch-up, and whether two devices hold the same state must all be true
of what that server's links did. Each test is named after what it checks.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from feral.node.home.identity import load_or_create_identity
from feral.sync.codec import KIND_PAGE, PROTOCOL_VERSION, decode_message, encode_message
from feral.sync.messages import Ack, Pending, Vector
from feral.sync.schema import FACTS
from feral.sync.session import SyncSession

from .helpers import turn_off_embeddings
from .hostile_support import authenticate, local_peer, open_sync, pack, receive
from .servers import FeralNode, Mesh, pair_dialing, wait_until

LINK_UP_S = 30.0


def peer_row(node: FeralNode, peer: FeralNode) -> dict[str, Any]:
    return node.peer_status(peer)


def holds(node: FeralNode, text: str) -> bool:
    return bool(node.query("SELECT 1 FROM facts WHERE object = ?", text))


@pytest.mark.slow
def test_status_shows_a_link_up_now_and_after_the_peer_stops_when_it_last_was(
    mesh: Mesh,
) -> None:
    laptop, server = mesh.add("laptop", "server")
    pair_dialing(laptop, server)
    mesh.start(laptop, server)
    server.run("memory", "remember", "a fact that needs a link")
    assert wait_until(lambda: holds(laptop, "a fact that needs a link"), LINK_UP_S), "no link"

    # A CLI process beside each serve sees the serve's link as up now.
    for node, peer in ((laptop, server), (server, laptop)):
        row = peer_row(node, peer)
        assert row["reachable"] is True and row["link_up"] is True, row
        assert row["link_up_since"] is not None, row
        assert "up now" in node.run("sync", "status").stdout

    before_stop = int(time.time() * 1000)
    server.stop()

    def link_down() -> dict[str, Any] | None:
        row = peer_row(laptop, server)
        return row if not row["link_up"] else None

    row = wait_until(link_down, LINK_UP_S)
    assert row is not None, "the laptop still says the link is up"
    assert row["reachable"] is False, row
    assert row["last_seen_at"] is not None and row["last_seen_at"] >= before_stop - 1000, row
    human = laptop.run("sync", "status").stdout
    # Within a second of the link going down it reads "just now" (cli/output.py's ``ago``).
    assert re.search(r"last up (\d+ ?(s|min|h) ago|just now)", human), human


@pytest.mark.slow
def test_last_error_is_shown_with_its_time_and_cleared_by_the_next_successful_sync(
    mesh: Mesh,
) -> None:
    laptop, server = mesh.add("laptop", "server")
    pair_dialing(laptop, server)

    failed = laptop.run("sync", "now", check=False)
    assert failed.returncode == 1, failed
    row = peer_row(laptop, server)
    assert row["last_error"] and "cannot reach" in row["last_error"], row
    assert row["last_error_at"] is not None, row
    # Within a second of the failure it reads "just now" (cli/output.py's ``ago``).
    shown = laptop.run("sync", "status").stdout
    assert re.search(r"(\d+ ?(s|min|h) ago|just now): cannot reach", shown), shown

    mesh.start(server)
    laptop.run("sync", "now")
    row = peer_row(laptop, server)
    assert row["last_error"] is None and row["last_error_at"] is None, row
    assert row["errors"] == 1, row  # the count of failures stays


@pytest.mark.slow
async def test_backlogs_to_send_and_to_receive_are_counted_before_a_sync_and_zero_after(
    mesh: Mesh,
) -> None:
    laptop, server = mesh.add("laptop", "server")
    pair_dialing(server, laptop)
    mesh.start(laptop)
    server.run("sync", "now")
    for n in range(3):
        laptop.run("memory", "remember", f"offline fact {n}")
    # Each fact, and the related_to edges absorbing it made (docs/MEMORY.md, "Absorb").
    ((written,),) = laptop.query("SELECT count(*) FROM delta_log WHERE origin = ?", laptop.node_id)
    assert written >= 3
    row = peer_row(laptop, server)
    assert row["backlog_to_send"] == written and row["backlog"] == written, row

    # The server announces what it is about to stream (Pending), then its link breaks.
    identity = load_or_create_identity(server.home)
    held = server.status()["vector"]
    async with open_sync(f"{laptop.url}/sync") as ws:
        await authenticate(ws, SyncSession(local_peer(identity)))
        await ws.send(encode_message(Vector(held)))
        await ws.send(encode_message(Pending(5)))
        pending = decode_message(await receive(ws))  # the laptop's own announcement
        assert pending == Pending(written), pending
    assert wait_until(lambda: peer_row(laptop, server)["backlog_to_receive"] == 5, 10)

    for n in range(2):
        server.run("memory", "remember", f"server fact {n}")
    server.run("sync", "now")
    for node, peer in ((laptop, server), (server, laptop)):
        row = peer_row(node, peer)
        assert row["backlog_to_send"] == 0 and row["backlog_to_receive"] == 0, (node.name, row)


@pytest.mark.slow
def test_catch_up_progress_is_in_status_and_the_serve_log(mesh: Mesh, tmp_path: Any) -> None:
    laptop, server = mesh.add("laptop", "server")
    for node in (laptop, server):
        turn_off_embeddings(node.home)
    facts = tmp_path / "facts.txt"
    facts.write_text("".join(f"bulk fact {n}\n" for n in range(2500)))
    server.cli("memory", "import", str(facts))
    pair_dialing(laptop, server)
    mesh.start(server, laptop)

    def caught_up() -> dict[str, Any] | None:
        row = peer_row(laptop, server)
        catch_up = row["catch_up"]
        return row if catch_up and catch_up["received"] == catch_up["total"] else None

    row = wait_until(caught_up, 60)
    assert row is not None, peer_row(laptop, server)
    assert row["catch_up"] == {"received": 2500, "total": 2500, "percent": 100}, row
    log = laptop.serve_log()
    assert re.search(r"catching up from \S+: 1,000 of 2,500 rows \(40%\)", log), log
    assert re.search(r"catching up from \S+: 2,500 of 2,500 rows \(100%\)", log), log


@pytest.mark.slow
async def test_equal_vectors_with_different_content_are_reported_diverged_not_in_sync(
    mesh: Mesh,
) -> None:
    """A paired device forges the laptop's entry before the real one reaches the server: both
    then hold the laptop's log up to the same stamp with the same count, but other content."""
    laptop, server = mesh.add("laptop", "server")
    pair_dialing(laptop, server)
    mesh.start(server)
    laptop.run("sync", "now")
    laptop.run("memory", "remember", "what the laptop really wrote")
    (entry,) = laptop.query(
        "SELECT hlc, row_id FROM delta_log WHERE origin = ? ORDER BY hlc DESC LIMIT 1",
        laptop.node_id,
    )
    held = server.status()["vector"].get(laptop.node_id, 0)

    identity = load_or_create_identity(laptop.home)  # the forger holds a paired key
    rest = ["forged", "says", "not what the laptop wrote", 1.0, None, 1, False]
    forged_entry = [FACTS.code, *entry, rest, None]  # no prior: a first write
    forged = pack(PROTOCOL_VERSION, KIND_PAGE, laptop.node_id, held, [forged_entry])
    async with open_sync(f"{server.url}/sync") as ws:
        await authenticate(ws, SyncSession(local_peer(identity)))
        await ws.send(forged)
        while not isinstance(answer := decode_message(await receive(ws)), Ack):
            pass
        assert answer == Ack(laptop.node_id, entry[0])

    result = laptop.run("sync", "now", "--json", check=False)
    (outcome,) = json.loads(result.stdout)
    assert result.returncode == 1 and not outcome["ok"], outcome
    assert "diverged" in outcome["error"], outcome
    for node, peer in ((laptop, server), (server, laptop)):
        status = node.status()
        assert status["vector"] == peer.status()["vector"]
        row = peer_row(node, peer)
        assert row["in_sync"] is False and row["diverged"] is True, (node.name, row)
        assert row["sync_state"] == "diverged", (node.name, row)
        assert "DIVERGED" in node.run("sync", "status").stdout
