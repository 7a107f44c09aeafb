"""Real ``feral serve`` processes on loopback, synced through the real CLI (DESIGN §7).

Every node is its own home in ``tmp_path`` with its own port. Homes are set up (init, pairing,
offline edits) with the CLI in this process, which is quicker; ``feral serve``, ``sync now``,
``sync status`` and ``memory export`` run as processes of their own, as a user runs them. The
``mesh`` fixture stops every server it started when the test ends, pass or fail, and then
checks that no server logged a traceback.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import sqlean

from .servers import (
    FeralNode,
    Mesh,
    export_rows,
    lww_winners,
    pair,
    render_export,
    run_parallel,
    wait_until,
)

FACT_COUNT = 20_000
HOUR_MS = 3_600_000
MINUTE_MS = 60_000

Status = dict[str, Any]


def write_lines(node: FeralNode, name: str, lines: list[str]) -> Path:
    path = node.home.parent / f"{node.name}-{name}.txt"
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def as_export_lines(texts: list[str]) -> list[str]:
    """Notes as lines of an export: imported as they were, never classified (a catch-up's
    size is what counts here; 20,000 look-alike notes through the absorb pipeline take many
    minutes, a known cost of classifying an import)."""
    return [
        json.dumps({"table": "facts", "hlc": 1, "origin": "", "subject": "user",
                    "predicate": "note", "object": text})
        for text in texts
    ]  # fmt: skip


def exports(*nodes: FeralNode) -> list[str]:
    results = run_parallel((node, ("memory", "export")) for node in nodes)
    for node, result in zip(nodes, results, strict=True):
        assert result.returncode == 0, f"{node.name}: export: {result.stderr}"
    return [r.stdout for r in results]


def statuses(*nodes: FeralNode) -> list[Status]:
    results = run_parallel((node, ("sync", "status", "--json")) for node in nodes)
    for node, result in zip(nodes, results, strict=True):
        assert result.returncode == 0, f"{node.name}: status: {result.stderr}"
    return [json.loads(r.stdout) for r in results]


def peer_row(status: Status, peer: FeralNode) -> Status:
    rows: list[Status] = [p for p in status["peers"] if p["node_id"] == peer.node_id]
    assert len(rows) == 1, f"no peer {peer.name} in {status['peers']}"
    return rows[0]


def held(status: Status) -> tuple[object, ...]:
    """What a node holds, from its status: the export's digest, the version vector, the clock."""
    return status["state_digest"], status["vector"], status["hlc"]


def id_of(export: str, text: str) -> str:
    rows = export_rows(export).values()
    ids: list[str] = [row["id"] for row in rows if row.get("object") == text]
    assert len(ids) == 1, f"{text!r} not in export once"
    return ids[0]


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def home_server_with_laptop_and_phone(mesh: Mesh) -> tuple[FeralNode, FeralNode, FeralNode]:
    """The server dials the laptop and accepts the phone; laptop and phone only know the server."""
    server, laptop, phone = mesh.add("server", "laptop", "phone")
    pair(server, laptop, dial=True)
    pair(server, phone, dial=False)
    pair(laptop, server, dial=True)
    pair(phone, server, dial=True)
    return server, laptop, phone


@pytest.mark.slow
def test_three_devices_with_offline_edits_converge_through_the_home_server(mesh):
    server, laptop, phone = home_server_with_laptop_and_phone(mesh)
    shared = "my doctor's name is Dr. Chen"
    contested = "dentist appointment on friday at 3pm"
    erased = "the old flat was at 12 Elm Street"  # (a code or PIN would be refused as a secret)
    imports = {
        laptop: [shared, contested, "the car is due for service in May", erased],
        phone: [shared, contested, "buy oat milk on the way home"],
        server: ["backups run at 2am"],
    }
    for node, lines in imports.items():
        node.cli("memory", "import", str(write_lines(node, "offline", lines)))
    laptop_before = laptop.cli("memory", "export")
    contested_id, erased_id = id_of(laptop_before, contested), id_of(laptop_before, erased)
    # Offline: the laptop edits the contested row (archives and restores it) and erases a fact;
    # afterwards the phone archives the same row, so the phone's write is the newest.
    laptop.cli("memory", "forget", contested_id)
    laptop.cli("memory", "restore", contested_id)
    laptop.cli("memory", "nuke", erased_id, "--yes")
    phone.cli("memory", "forget", contested_id)
    expected = render_export(lww_winners(*(n.cli("memory", "export") for n in imports)))

    mesh.start(server, laptop, phone)
    for _ in range(6):
        rounds = run_parallel((node, ("sync", "now", "--json")) for node in (laptop, phone))
        assert all(r.returncode == 0 for r in rounds), [r.stderr for r in rounds]
        assert all(o["ok"] for r in rounds for o in json.loads(r.stdout)), rounds
        states = statuses(server, laptop, phone)
        flags = [p["in_sync"] for s in states for p in s["peers"]]
        if len({s["state_digest"] for s in states}) == 1 and all(flags):
            break
    else:
        pytest.fail(f"not quiet after 6 rounds: in_sync {flags}")

    after = exports(server, laptop, phone)
    assert after[0] == after[1] == after[2]
    assert after[0] == expected, "the rows are not each one's last-writer-wins winner"
    rows = export_rows(after[0])
    facts = [row for row in rows.values() if row["table"] == "facts"]
    assert sum(row["object"] == shared for row in facts) == 1
    assert rows[("facts", contested_id)]["archived"] is True
    assert rows[("facts", contested_id)]["origin"] == phone.node_id
    assert rows[("facts", erased_id)]["deleted"] is True
    assert erased not in after[0]
    # The laptop never talks to the phone: the phone's own fact reached it through the server.
    relayed = [
        r
        for r in export_rows(after[1]).values()
        if r.get("object") == "buy oat milk on the way home"
    ]
    assert len(relayed) == 1 and relayed[0]["origin"] == phone.node_id
    server_status, laptop_status, phone_status = states
    assert [p["node_id"] for p in laptop_status["peers"]] == [server.node_id]
    assert [p["node_id"] for p in phone_status["peers"]] == [server.node_id]
    for status, peer in (
        (server_status, laptop),
        (server_status, phone),
        (laptop_status, server),
        (phone_status, server),
    ):
        row = peer_row(status, peer)
        assert row["in_sync"] is True, (status["name"], peer.name, row)
        assert row["backlog"] == 0
        assert row["last_sync_at"] is not None


def holds(node: FeralNode, text: str) -> bool:
    conn = sqlean.connect(str(node.database), timeout=5)
    try:
        return conn.execute("SELECT 1 FROM facts WHERE object = ?", (text,)).fetchone() is not None
    finally:
        conn.close()


@pytest.mark.slow
def test_a_fact_remembered_on_the_phone_reaches_the_laptop_live(mesh):
    server, laptop, phone = home_server_with_laptop_and_phone(mesh)
    mesh.start(server, laptop, phone)
    # The links are up once a write on one edge device shows up on the other.
    laptop.cli("memory", "remember", "warm-up from the laptop")
    assert wait_until(lambda: holds(phone, "warm-up from the laptop"), 20), "no link came up"

    started = time.monotonic()
    phone.run("memory", "remember", "parked on level 3, row F")  # a process beside the server
    arrived = wait_until(lambda: holds(laptop, "parked on level 3, row F"), 20, interval=0.05)
    assert arrived, "the phone's fact did not reach the laptop within 20 s"
    assert time.monotonic() - started < 20
    assert "parked on level 3, row F" in laptop.export()


@pytest.mark.slow
def test_a_receiver_killed_mid_catch_up_loses_nothing_and_resumes(mesh):
    sender, receiver = mesh.add("sender", "receiver")
    pair(receiver, sender, dial=False)
    pair(sender, receiver, dial=True)
    many = [f"fact number {i} about topic {i % 97}" for i in range(FACT_COUNT)]
    sender.cli("memory", "import", str(write_lines(sender, "many", as_export_lines(many))))
    # Imported, not remembered: remember may link related notes, and this counts rows.
    own = ["the receiver's own note", "and another one"]
    receiver.cli("memory", "import", str(write_lines(receiver, "own", own)))
    total = FACT_COUNT + 2

    mesh.start(receiver)
    round_one = subprocess.Popen(
        sender.argv("sync", "now"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=sender.environment(),
    )
    try:
        partway = wait_until(lambda: receiver.count() > 2, 30, interval=0.01)
        assert partway, "no page of the catch-up landed"
        receiver.kill()
        out, err = round_one.communicate(timeout=60)
    finally:
        if round_one.poll() is None:
            round_one.kill()
            round_one.communicate()
    landed = receiver.count()
    assert 2 < landed < total, f"the catch-up finished ({landed} rows) before the kill"
    assert round_one.returncode == 1, (out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err

    conn = sqlean.connect(str(receiver.database))
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        rows, logged, top = conn.execute(
            "SELECT (SELECT count(*) FROM facts WHERE origin = ?), "
            "(SELECT count(*) FROM delta_log WHERE origin = ?), "
            "(SELECT max(hlc) FROM delta_log WHERE origin = ?)",
            (sender.node_id,) * 3,
        ).fetchone()
        vector_entry = conn.execute(
            "SELECT hlc FROM version_vector WHERE origin = ?", (sender.node_id,)
        ).fetchone()
    finally:
        conn.close()
    # Each page lands whole with its log entries, and the vector moves only with the data.
    assert rows == logged == landed - 2
    assert vector_entry == (top,)

    mesh.start(receiver)
    sender.run("sync", "now")
    sender_export, receiver_export = exports(sender, receiver)
    assert sender_export == receiver_export
    assert len(export_rows(receiver_export)) == total
    assert receiver.count() == total
    conn = sqlean.connect(str(receiver.database))
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()


@pytest.mark.slow
def test_a_node_the_server_has_not_paired_is_refused_and_the_server_carries_on(mesh):
    server, stranger, friend = mesh.add("server", "stranger", "friend")
    pair(server, friend, dial=False)
    for node in (stranger, friend):
        pair(node, server, dial=True)
        node.cli("memory", "remember", f"the {node.name}'s fact")
    server.cli("memory", "remember", "the server's fact")
    mesh.start(server)
    before = server.status()

    error = one_line_error(stranger.run("sync", "now", check=False))
    assert "not paired" in error, error
    assert stranger.node_id in error

    assert held(server.status()) == held(before)
    assert [p["node_id"] for p in before["peers"]] == [friend.node_id]
    assert "the server's fact" not in stranger.cli("memory", "export")
    assert "not paired" in (stranger.peer_status(server)["last_error"] or "")

    assert server.process is not None and server.process.poll() is None
    friend.run("sync", "now")
    friend_export, server_export = exports(friend, server)
    assert friend_export == server_export
    assert "the friend's fact" in server_export
    assert "the stranger's fact" not in server_export


@pytest.mark.slow
def test_a_node_whose_clock_runs_an_hour_ahead_is_refused_with_a_clock_skew_error(mesh):
    server, fast, close = mesh.add(
        "server",
        "fast",
        "close",
        env={
            "fast": {"FERAL_CLOCK_OFFSET_MS": str(HOUR_MS)},
            "close": {"FERAL_CLOCK_OFFSET_MS": str(MINUTE_MS)},
        },
    )
    for node in (fast, close):
        pair(server, node, dial=False)
        pair(node, server, dial=True)
    fast.cli("memory", "remember", "written an hour in the future")
    close.cli("memory", "remember", "written a minute in the future")
    server.cli("memory", "remember", "the server's fact")
    mesh.start(server)
    before = server.status()

    error = one_line_error(fast.run("sync", "now", check=False))
    assert "clock skew" in error, error
    assert held(server.status()) == held(before)
    assert "clock skew" in (fast.peer_status(server)["last_error"] or "")

    close.run("sync", "now")  # a minute ahead is inside the five-minute window
    close_export, server_export = exports(close, server)
    assert close_export == server_export
    assert "written a minute in the future" in server_export
    assert "written an hour in the future" not in server_export


@pytest.mark.slow
def test_writes_stamped_an_hour_ahead_are_refused_after_the_clock_is_fixed(mesh):
    server, fast = mesh.add("server", "fast", env={"fast": {"FERAL_CLOCK_OFFSET_MS": str(HOUR_MS)}})
    pair(server, fast, dial=False)
    pair(fast, server, dial=True)
    fast.cli("memory", "remember", "written an hour in the future")
    fast.env.clear()  # the clock is fixed, but the stamp it wrote is still an hour ahead
    server.cli("memory", "remember", "the server's fact")
    mesh.start(server)
    before = server.status()

    error = one_line_error(fast.run("sync", "now", check=False))
    assert "clock skew" in error, error
    after = server.status()
    assert held(after) == held(before)
    refused = peer_row(after, fast)
    assert "clock skew" in (refused["last_error"] or ""), refused
    assert refused["errors"] >= 1
    assert server.process is not None and server.process.poll() is None
