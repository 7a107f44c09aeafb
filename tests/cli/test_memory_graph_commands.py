"""``feral memory remember`` telling what it did, ``memory link`` and ``memory get --follow``."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import feral, feral_json, init_home


@pytest.fixture(autouse=True)
def _initialised(tmp_path: Path) -> None:
    """Every case's home made by ``feral init`` first: no other command makes one."""
    init_home(tmp_path)


def test_remember_prints_the_classification_and_the_edges(tmp_path):
    chen = feral_json(tmp_path, "memory", "remember", "my doctor is Dr. Chen")
    assert (chen["status"], chen["classification"], chen["edges_created"]) == ("absorbed", "new", 0)
    printed = feral(tmp_path, "memory", "remember", "my doctor is now Dr. Lee").stdout.splitlines()
    assert printed[0].startswith("Remembered ") and printed[0].endswith(": user / doctor / Dr. Lee")
    undo = f"`feral memory restore {chen['id']}` brings it back"
    assert printed[1:] == [
        "Classified supersede:",
        f"  supersedes {chen['id']} (now archived; {undo})",
    ]
    again = feral(tmp_path, "memory", "remember", "my doctor is Dr. Lee").stdout
    assert again.startswith("Already remembered ") and "(duplicate, nothing written;" in again


def test_link_writes_one_edge_and_get_follows_it(tmp_path):
    a = feral_json(tmp_path, "memory", "remember", "booked flights to Lisbon")
    b = feral_json(tmp_path, "memory", "remember", "the boiler needs a service")
    edge = feral_json(
        tmp_path, "memory", "link", a["id"], b["id"], "--type", "related_to", "--note", "one trip"
    )
    assert (edge["from_id"], edge["to_id"], edge["type"], edge["note"]) == (
        a["id"], b["id"], "related_to", "one trip",
    )  # fmt: skip
    again = feral_json(tmp_path, "memory", "link", a["id"], b["id"], "--type", "related_to",
                       "--note", "one trip")  # fmt: skip
    assert again["id"] == edge["id"] and again["hlc"] == edge["hlc"]  # nothing new written
    shown = feral_json(tmp_path, "memory", "get", b["id"], "--follow", "edges")
    assert shown["record"]["id"] == b["id"]
    assert [e["id"] for e in shown["edges"]] == [edge["id"]]
    plain = feral(tmp_path, "memory", "get", a["id"], "--follow", "edges").stdout.splitlines()
    assert plain[1] == f"  edge  {a['id']} related_to {b['id']}"


def test_get_full_history_shows_superseded_versions_and_conflicts(tmp_path):
    lines = tmp_path / "doctors.jsonl"
    lines.write_text(  # an export's two live values: imported as they were, not classified
        '{"table": "facts", "hlc": 1, "origin": "x", "archived": false, '
        '"subject": "user", "predicate": "doctor", "object": "Dr. Lee"}\n'
        '{"table": "facts", "hlc": 2, "origin": "x", "archived": false, '
        '"subject": "user", "predicate": "doctor", "object": "Dr. Patel"}\n'
    )
    feral(tmp_path, "memory", "import", str(lines))
    kim = feral_json(tmp_path, "memory", "remember", "my doctor is Dr. Kim")
    assert kim["classification"] == "supersede" and kim["edges_created"] == 2
    shown = feral_json(tmp_path, "memory", "get", kim["id"], "--follow", "full_history")
    assert sorted(r["object"] for r in shown["history"]) == ["Dr. Lee", "Dr. Patel"]
    assert shown["conflicting"] is False
    plain = feral(tmp_path, "memory", "get", kim["id"], "--follow", "full_history").stdout
    assert plain.count("  superseded  ") == 2 and "[archived]  by " + kim["id"] in plain
    feral(tmp_path, "memory", "import", str(lines))  # both back: three live values now
    restored = feral(tmp_path, "memory", "get", kim["id"]).stdout
    assert restored.splitlines()[-1].startswith("  conflicting current values: ")
    stats = feral_json(tmp_path, "memory", "stats")
    assert stats["conflicting_values"] == 1  # one slot, however many values
    assert stats["conflicts"] == 1  # as sync status and memory conflicts count it
    assert (
        "conflicts      1 open (feral memory conflicts)"
        in feral(tmp_path, "memory", "stats").stdout
    )


def test_bad_link_and_get_input_is_one_line_and_exit_1(tmp_path):
    a = feral_json(tmp_path, "memory", "remember", "something")
    missing = feral(tmp_path, "memory", "link", a["id"], "nope", "--type", "related_to")
    assert missing.exit_code == 1 and missing.stderr == "Error: no memory with id 'nope'\n"
    itself = feral(tmp_path, "memory", "link", a["id"], a["id"], "--type", "related_to")
    assert itself.exit_code == 1 and len(itself.stderr.strip().splitlines()) == 1
    assert feral(tmp_path, "memory", "link", a["id"], a["id"], "--type", "friends").exit_code == 2
    unknown = feral(tmp_path, "memory", "get", "nope")
    assert unknown.exit_code == 1 and unknown.stderr == "Error: no memory with id 'nope'\n"
