"""Issue 11, finding 7: silent permanent divergence under a forged collision.

A paired device writes entries in another origin's name at stamps that origin used. Each
``(origin, hlc)`` names one write, so a second copy with other content is forged (or a reused
stamp): the server must keep its own copy, raise an integrity alarm (counted in ``sync status``,
logged in the serve log), stop claiming ``in sync`` with that peer, and never take the forged
entry, not even in a repair, which re-sends a whole origin and merges every entry.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from feral.sync.codec import KIND_PAGE, PROTOCOL_VERSION, decode_message, encode_message
from feral.sync.messages import Ack, CaughtUp, Vector
from feral.sync.schema import FACTS
from feral.sync.session import SyncSession

from .hostile_support import (
    SERVER_FACT,
    Target,
    authenticate,
    local_peer,
    now_ms,
    open_sync,
    pack,
    receive,
    serving_target,
)

FORGED_ID = "f" + "0" * 31


@pytest.fixture
def target(tmp_path: Path) -> Iterator[Target]:
    with serving_target(tmp_path) as served:
        served.client.run("sync", "now")
        yield served


def own_entry(target: Target) -> dict[str, Any]:
    """The server's own write, as its export shows it."""
    rows = [json.loads(line) for line in target.export.splitlines()]
    (own,) = [row for row in rows if row.get("object") == SERVER_FACT]
    assert own["origin"] == target.server.node_id
    return own


def forged_page(target: Target, hlc: int, row_id: str) -> bytes:
    """A page in the server's name holding one entry at ``hlc``, with other content."""
    rest = ["forged", "says", "not what the server wrote", 1.0, None, now_ms(), False]
    entry = [FACTS.code, hlc, row_id, rest, None]
    return pack(PROTOCOL_VERSION, KIND_PAGE, target.server.node_id, 0, [entry])


def server_status(target: Target) -> dict[str, Any]:
    return target.server.status()


def client_row(status: dict[str, Any], target: Target) -> dict[str, Any]:
    (row,) = [p for p in status["peers"] if p["node_id"] == target.client_id]
    return row


def assert_alarm_raised(target: Target, hlc: int) -> None:
    assert target.server.export() == target.export, "the forged entry was taken"
    status = server_status(target)
    alarms = status.get("integrity_alarms")
    assert alarms is not None and alarms["count"] == 1, f"no integrity alarm: {alarms}"
    assert alarms["latest"]["origin"] == target.server.node_id, alarms
    assert alarms["latest"]["hlc"] == hlc, alarms
    assert alarms["latest"]["peer"] == target.client_id, alarms
    row = client_row(status, target)
    assert row["integrity_alarms"] == 1, row
    assert row["in_sync"] is False, row
    assert "integrity alarm" in target.server.serve_log(), target.server.serve_log()
    assert "INTEGRITY" in target.server.run("sync", "status").stdout


@pytest.mark.slow
async def test_a_forged_colliding_entry_raises_an_integrity_alarm_and_is_never_in_sync(
    target: Target,
) -> None:
    own = own_entry(target)
    assert client_row(server_status(target), target)["in_sync"] is True
    async with open_sync(target.url) as ws:
        await authenticate(ws, SyncSession(local_peer(target.identity)))
        await ws.send(forged_page(target, own["hlc"], own["id"]))
        answer = decode_message(await receive(ws))
    assert answer == Ack(target.server.node_id, own["hlc"])
    assert_alarm_raised(target, own["hlc"])


@pytest.mark.slow
async def test_a_repair_never_takes_a_forged_entry_at_a_stamp_the_server_holds(
    target: Target,
) -> None:
    """The probe claims one more entry of the server's own log than the server holds (a hole,
    by the counts of docs/REPLICATION.md §5): the server asks for its whole log again and would
    merge every entry, a forged row under one of its own stamps included."""
    own = own_entry(target)
    status = server_status(target)
    vector = status["vector"]
    server = target.server.node_id
    entries = {origin: 1 for origin in vector}
    entries[server] = 2
    async with open_sync(target.url) as ws:
        await authenticate(ws, SyncSession(local_peer(target.identity)))
        await ws.send(encode_message(CaughtUp(vector, entries)))
        request = decode_message(await receive(ws))
        assert isinstance(request, Vector) and request.vector[server] == 0, request
        await ws.send(forged_page(target, own["hlc"], FORGED_ID))
        answer = decode_message(await receive(ws))
    assert answer == Ack(server, own["hlc"])
    assert_alarm_raised(target, own["hlc"])
