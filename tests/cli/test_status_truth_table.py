"""``feral sync status``'s truth table (docs/OPERATIONS.md), one test per row, with
real ``feral serve`` processes on loopback (issue 23).

"In sync" means equal holdings and digests at the last exchange, and that exchange younger
than the anti-entropy period (plus a grace for the round it starts): otherwise status says when
the peer was last known and what is known to be pending. The rows: ``in_sync``,
``not_in_sync``, ``catching_up``, ``diverged`` (tests/cli/test_truthful_status.py),
``unknown``, ``unreachable`` and ``never_exchanged``.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from feral.node.home.identity import load_or_create_identity
from feral.sync.codec import encode_message
from feral.sync.messages import Pending, Vector
from feral.sync.session import SyncSession

from .hostile_support import authenticate, local_peer, open_sync, receive
from .servers import FeralNode, Mesh, pair_dialing, wait_until

PERIOD = {"FERAL_ANTI_ENTROPY_S": "1"}
"""A short anti-entropy period, so an exchange goes stale within seconds."""
STALE_S = 30.0
"""How long a test waits for a last exchange to become older than the period and its grace."""


def row_of(node: FeralNode, peer: FeralNode) -> dict[str, Any]:
    return node.peer_status(peer)


def in_sync_cell(node: FeralNode) -> str:
    """The ``in sync`` line of the one peer's block in the human status."""
    human = node.run("sync", "status").stdout
    match = re.search(r"^\s+in sync\s+(.*)$", human, re.MULTILINE)
    assert match, human
    return match.group(1)


def own_entries(node: FeralNode) -> int:
    ((written,),) = node.query("SELECT count(*) FROM delta_log WHERE origin = ?", node.node_id)
    return int(written)


def stale(node: FeralNode, peer: FeralNode) -> dict[str, Any] | None:
    row = row_of(node, peer)
    return row if not row["in_sync"] else None


@pytest.mark.slow
def test_two_empty_devices_that_exchanged_are_in_sync(mesh: Mesh) -> None:
    laptop, server = mesh.add("laptop", "server")
    pair_dialing(laptop, server)
    mesh.start(server)
    laptop.run("sync", "now")
    for node, peer in ((laptop, server), (server, laptop)):
        row = row_of(node, peer)
        assert row["in_sync"] is True and row["sync_state"] == "in_sync", (node.name, row)
        assert (row["backlog_to_send"], row["backlog_to_receive"]) == (0, 0), row
        assert row["last_known_equal"] is True, row
        assert in_sync_cell(node) == "yes"


@pytest.mark.slow
def test_edits_after_a_fresh_exchange_are_not_in_sync_with_what_is_to_send(mesh: Mesh) -> None:
    laptop, server = mesh.add("laptop", "server")
    pair_dialing(laptop, server)
    mesh.start(server)
    laptop.run("sync", "now")
    for n in range(3):
        laptop.run("memory", "remember", f"edit after the exchange {n}")
    written = own_entries(laptop)
    row = row_of(laptop, server)
    assert row["sync_state"] == "not_in_sync" and row["in_sync"] is False, row
    assert (row["backlog_to_send"], row["backlog_to_receive"]) == (written, 0), row
    assert in_sync_cell(laptop) == f"no: {written} to send"


@pytest.mark.slow
def test_a_laptop_that_only_dials_out_does_not_claim_sync_once_its_exchange_is_stale(
    mesh: Mesh,
) -> None:
    """The server writes after the laptop's last ``sync now``: the laptop cannot know it, so
    once the exchange is older than the period it says since when it knows nothing, and that
    what it would receive is unknown (never 0)."""
    laptop, server = mesh.add("laptop", "server", env={"laptop": PERIOD, "server": PERIOD})
    pair_dialing(laptop, server)
    mesh.start(server)
    laptop.run("memory", "remember", "a fact both hold after the exchange")
    laptop.run("sync", "now")
    exchanged_at = row_of(laptop, server)["last_sync_at"]
    for n in range(6):
        server.run("memory", "remember", f"server fact {n}")

    row = wait_until(lambda: stale(laptop, server), STALE_S)
    assert row is not None, row_of(laptop, server)
    assert row["backlog_to_receive"] is None and row["backlog_to_send"] == 0, row
    assert row["sync_state"] == "unknown", row
    assert row["last_sync_at"] == exchanged_at and row["last_known_equal"] is True, row
    assert re.fullmatch(r"unknown since \d+ s ago \(equal then\)", in_sync_cell(laptop))


@pytest.mark.slow
def test_a_server_does_not_claim_sync_with_an_offline_phone(mesh: Mesh) -> None:
    """The phone synced once, then went offline holding edits the server cannot see."""
    phone, server = mesh.add("phone", "server", env={"phone": PERIOD, "server": PERIOD})
    pair_dialing(phone, server)
    mesh.start(server)
    phone.run("memory", "remember", "a fact both hold after the exchange")
    phone.run("sync", "now")
    phone.run("memory", "remember", "an edit made offline")

    row = wait_until(lambda: stale(server, phone), STALE_S)
    assert row is not None, row_of(server, phone)
    assert row["link_up"] is False and row["backlog_to_receive"] is None, row
    assert row["sync_state"] == "unknown", row
    assert in_sync_cell(server).startswith("unknown since ")


@pytest.mark.slow
def test_a_peer_that_cannot_be_reached_is_unreachable_with_the_edits_unsent(mesh: Mesh) -> None:
    phone, server = mesh.add("phone", "server")
    pair_dialing(phone, server)
    mesh.start(server)
    phone.run("sync", "now")
    server.stop()
    for n in range(2):
        phone.run("memory", "remember", f"written while the server is away {n}")
    unsent = own_entries(phone)
    assert phone.run("sync", "now", check=False).returncode == 1

    row = row_of(phone, server)
    assert row["sync_state"] == "unreachable" and row["in_sync"] is False, row
    assert row["backlog_to_send"] == unsent and row["last_seen_at"] is not None, row
    cell = in_sync_cell(phone)
    assert re.fullmatch(rf"unreachable since (\d+ s ago|just now): {unsent} unsent", cell), cell


@pytest.mark.slow
def test_a_peer_never_reached_is_unreachable_and_one_never_tried_never_exchanged(
    mesh: Mesh,
) -> None:
    phone, server = mesh.add("phone", "server")
    pair_dialing(phone, server)
    phone.run("memory", "remember", "written before any sync")
    unsent = own_entries(phone)
    row = row_of(phone, server)
    assert row["sync_state"] == "never_exchanged" and row["in_sync"] is False, row
    assert row["backlog_to_send"] == unsent and row["last_known_equal"] is None, row
    assert in_sync_cell(phone) == f"never exchanged: {unsent} unsent"

    assert phone.run("sync", "now", check=False).returncode == 1
    row = row_of(phone, server)
    assert row["sync_state"] == "unreachable", row
    assert in_sync_cell(phone) == f"unreachable, never reached: {unsent} unsent"


@pytest.mark.slow
async def test_an_announced_stream_is_catching_up_while_its_link_is_up(mesh: Mesh) -> None:
    laptop, server = mesh.add("laptop", "server")
    pair_dialing(server, laptop)
    mesh.start(laptop)
    server.run("sync", "now")

    identity = load_or_create_identity(server.home)
    held = server.status()["vector"]
    async with open_sync(f"{laptop.url}/sync") as ws:
        await authenticate(ws, SyncSession(local_peer(identity)))
        await ws.send(encode_message(Vector(held)))
        await ws.send(encode_message(Pending(5)))
        await receive(ws)  # the laptop's own announcement: the link is up
        row = wait_until(lambda: row_of(laptop, server)["backlog_to_receive"] == 5, 10)
        assert row, row_of(laptop, server)
        row = row_of(laptop, server)
        assert row["sync_state"] == "catching_up" and row["link_up"] is True, row
        assert in_sync_cell(laptop) == "catching up 0% (0 of 5)"

    # The stream broke off: what it announced is still known to be pending.
    def link_down() -> dict[str, Any] | None:
        found = row_of(laptop, server)
        return found if not found["link_up"] else None

    row = wait_until(link_down, 10)
    assert row is not None, row_of(laptop, server)
    assert row["sync_state"] == "not_in_sync" and row["backlog_to_receive"] == 5, row
    assert in_sync_cell(laptop) == "no: 5 to receive"


@pytest.mark.slow
def test_a_live_link_stays_in_sync_past_the_period(mesh: Mesh) -> None:
    """Anti-entropy renews the exchange each period, so two serves linked stay in sync."""
    laptop, server = mesh.add("laptop", "server", env={"laptop": PERIOD, "server": PERIOD})
    pair_dialing(laptop, server)
    mesh.start(server, laptop)
    server.run("memory", "remember", "a fact the live link carries")

    def both_in_sync() -> bool:
        rows = (row_of(laptop, server), row_of(server, laptop))
        return all(r["sync_state"] == "in_sync" for r in rows)

    assert wait_until(both_in_sync, STALE_S), (row_of(laptop, server), row_of(server, laptop))
    first = row_of(laptop, server)["last_sync_at"]
    window_s = laptop.status()["in_sync_window_ms"] / 1000
    deadline = time.time() + window_s + 1
    assert wait_until(lambda: time.time() > deadline, window_s + 5)
    for node, peer in ((laptop, server), (server, laptop)):
        row = row_of(node, peer)
        assert row["sync_state"] == "in_sync", (node.name, row)
        assert row["last_sync_at"] > first, (node.name, row)
