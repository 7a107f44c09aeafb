"""Two devices that each supersede one fact while offline: real ``feral serve`` processes on
loopback, two homes, synced through the real CLI. Both new values stay live, the old one is
archived on both, and both flag the slot as holding conflicting current values."""

from __future__ import annotations

import json

import pytest

from .servers import FeralNode, Mesh, export_rows, pair, run_parallel

ROUNDS = 8


def _sync(laptop: FeralNode, phone: FeralNode) -> None:
    """``sync now`` on the laptop (the phone only accepts) until both hold the same rows."""
    for _ in range(ROUNDS):
        rounds = run_parallel([(laptop, ("sync", "now", "--json"))])
        assert all(r.returncode == 0 for r in rounds), [r.stderr for r in rounds]
        digests = {node.status()["state_digest"] for node in (laptop, phone)}
        if len(digests) == 1:
            return
    pytest.fail(f"not in sync after {ROUNDS} rounds")


def _fact_id(export: str, name: str) -> str:
    ids = [r["id"] for r in export_rows(export).values() if r.get("object") == name]
    assert len(ids) == 1, name
    return str(ids[0])


@pytest.mark.slow
def test_two_offline_devices_superseding_one_doctor_both_show_the_conflict(mesh: Mesh):
    laptop, phone = mesh.add("laptop", "phone")
    pair(laptop, phone, dial=True)
    pair(phone, laptop, dial=False)
    chen = json.loads(laptop.cli("memory", "remember", "my doctor is Dr. Chen", "--json"))
    mesh.start(laptop, phone)
    _sync(laptop, phone)
    laptop.stop()
    phone.stop()

    # Offline, each device learns a new doctor: each supersedes Dr. Chen.
    lee = json.loads(laptop.cli("memory", "remember", "my doctor is now Dr. Lee", "--json"))
    patel = json.loads(phone.cli("memory", "remember", "my doctor is Dr. Patel", "--json"))
    laptop.cli("graph", "add", "--relation", "person:Dr. Lee", "works_at", "place:Riverside clinic")
    phone.cli(
        "graph", "add", "--relation", "person:Dr. Patel", "works_at", "place:Riverside clinic"
    )
    for answer in (lee, patel):
        assert answer["classification"] == "supersede"
        assert [(e["type"], e["to_id"]) for e in answer["edges"]] == [("supersedes", chen["id"])]

    mesh.start(laptop, phone)
    _sync(laptop, phone)
    exports = [laptop.export(), phone.export()]
    assert exports[0] == exports[1]  # byte-identical
    rows = export_rows(exports[0])
    assert rows[("facts", chen["id"])]["archived"] is True
    assert rows[("facts", lee["id"])]["archived"] is False
    assert rows[("facts", patel["id"])]["archived"] is False
    assert _fact_id(exports[0], "Dr. Lee") == lee["id"]
    walk = ("graph", "query", "--start", "place:Riverside clinic", "--direction", "inbound")
    walked = [json.loads(node.cli(*walk, "--json")) for node in (laptop, phone)]
    assert walked[0] == walked[1]  # identical graph query results
    names = {row["name"] for row in walked[0]["results"]}
    assert {"Dr. Lee", "Dr. Patel"} <= names

    for node in (laptop, phone):
        shown = node.json("memory", "get", lee["id"], "--follow", "full_history")
        assert [r["id"] for r in shown["history"]] == [chen["id"]]
        assert shown["conflicting"] is True
        assert sorted(shown["current_values"]) == sorted([lee["id"], patel["id"]])
        old = node.json("memory", "get", chen["id"], "--follow", "edges")
        assert old["record"]["archived"] is True and old["conflicting"] is True
        assert sorted(e["from_id"] for e in old["edges"]) == sorted([lee["id"], patel["id"]])
        assert node.json("memory", "stats")["conflicting_values"] == 1
        compiled = node.run("wiki", "compile").stdout
        assert "Needs review (conflicting facts): user" in compiled
        page = node.run("wiki", "show", "user").stdout
        assert "Dr. Lee" in page and "Dr. Patel" in page and "Dr. Chen" not in page
