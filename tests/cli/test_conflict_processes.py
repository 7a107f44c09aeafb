"""Concurrent edits between real processes: surfaced on both devices, resolved on both, and a
later edit after sync is no conflict (docs/REPLICATION.md §4).

The phone runs ``feral serve`` (accept-only); the laptop has no server and reaches it only by
``feral sync now``, so between rounds the two are apart and each edits on its own. Every edit,
every sync, ``sync status`` and each refusal run as processes; the reads that only look at what
a home holds (exports, the conflict listing) run the same commands in this process, which spares
a process start per read (two per sync round) and checks the same rows.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .servers import FeralNode, Mesh, export_rows, pair_dialing


def sync_round(laptop: FeralNode) -> None:
    """One ``sync now`` from the laptop; the conflict records each side writes on receipt need
    a second round to cross, so callers run as many as it takes (bounded)."""
    result = laptop.run("sync", "now", "--json")
    assert all(o["ok"] for o in json.loads(result.stdout)), result.stdout


def export(node: FeralNode) -> str:
    """``feral memory export`` of the node's home, run in this process."""
    return node.cli("memory", "export")


def converge(laptop: FeralNode, phone: FeralNode) -> None:
    for _ in range(6):
        sync_round(laptop)
        if export(laptop) == export(phone):
            return
    raise AssertionError("the exports still differ after 6 rounds")


def open_conflicts(node: FeralNode) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(node.cli("memory", "conflicts", "--json"))
    return rows


def importance(node: FeralNode, fact_id: str) -> float:
    row = export_rows(export(node))[("memory_meta", fact_id)]
    return float(row["importance"])


@pytest.mark.slow
def test_a_concurrent_edit_is_surfaced_on_both_resolved_on_both_and_a_later_edit_is_not(
    mesh: Mesh,
) -> None:
    laptop, phone = mesh.add("laptop", "phone")
    pair_dialing(laptop, phone)
    fact = laptop.json("memory", "remember", "the dentist is on Elm Road")
    fact_id = fact["id"] if "id" in fact else fact["row"]["id"]
    mesh.start(phone)
    converge(laptop, phone)

    # Apart: each device sets the fact's importance its own way.
    laptop.run("memory", "boost", fact_id, "3")
    phone.run("memory", "boost", fact_id, "5")
    converge(laptop, phone)

    on_laptop, on_phone = open_conflicts(laptop), open_conflicts(phone)
    assert on_laptop == on_phone and len(on_laptop) == 1, (on_laptop, on_phone)
    (record,) = on_laptop
    assert record["row_id"] == fact_id and record["table"] == "memory_meta"
    assert sorted(v["importance"] for v in record["values"]) == [3.0, 5.0]
    live = importance(laptop, fact_id)
    assert live == importance(phone, fact_id) and live in (3.0, 5.0)
    assert laptop.status()["conflicts"] == phone.status()["conflicts"] == 1
    assert "conflicts 1 open" in laptop.run("sync", "status").stdout

    # Keep the side last-write-wins set aside.
    loser = next(v for v in record["versions"] if v != record["live"])
    kept = record["values"][record["versions"].index(loser)]["importance"]
    laptop.run("memory", "resolve", record["id"], "--keep", loser)
    converge(laptop, phone)
    assert open_conflicts(laptop) == open_conflicts(phone) == []
    assert importance(laptop, fact_id) == importance(phone, fact_id) == kept
    resolved = phone.json("memory", "conflicts", "--all")
    assert resolved[0]["resolved"] is True and resolved[0]["kept"] == loser

    # After sync, edits in turn on each device are later edits, not conflicts.
    phone.run("memory", "boost", fact_id, "7")
    converge(laptop, phone)
    laptop.run("memory", "boost", fact_id, "8")
    converge(laptop, phone)
    assert importance(phone, fact_id) == 8.0
    for node in (laptop, phone):
        assert open_conflicts(node) == []
        assert node.status()["conflicts"] == 0

    # Bad input: one line on stderr, exit 1.
    for args in (("cnotaconflict", "--keep", loser), (record["id"], "--keep", "12:zz")):
        result = laptop.run("memory", "resolve", *args, check=False)
        assert result.returncode == 1, result
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def fact_id(node: FeralNode, text: str) -> str:
    answer = node.json("memory", "remember", text)
    return str(answer["id"])


def counted_everywhere(node: FeralNode) -> tuple[int, int, int]:
    """The open conflicts as ``memory conflicts``, ``sync status`` and ``memory stats`` count."""
    stats = node.json("memory", "stats")
    return len(open_conflicts(node)), node.status()["conflicts"], stats["conflicts"]


@pytest.mark.slow
def test_two_devices_superseding_one_fact_apart_is_one_conflict_shown_and_resolved_everywhere(
    mesh: Mesh,
) -> None:
    laptop, phone = mesh.add("laptop", "phone")
    pair_dialing(laptop, phone)
    chen = fact_id(laptop, "my doctor is Dr. Chen")
    mesh.start(phone)
    converge(laptop, phone)

    # Apart: each device learns a new doctor, and each supersedes Dr. Chen.
    lee = fact_id(laptop, "my doctor is now Dr. Lee")
    patel = fact_id(phone, "my doctor is now Dr. Patel")
    converge(laptop, phone)

    on_laptop, on_phone = open_conflicts(laptop), open_conflicts(phone)
    assert on_laptop == on_phone and len(on_laptop) == 1, (on_laptop, on_phone)
    (record,) = on_laptop
    assert sorted(v["object"] for v in record["values"]) == ["Dr. Lee", "Dr. Patel"]
    assert sorted(v["id"] for v in record["values"]) == sorted([lee, patel])
    assert counted_everywhere(laptop) == counted_everywhere(phone) == (1, 1, 1)
    assert "conflicts 1 open" in laptop.run("sync", "status").stdout
    laptop.run("wiki", "compile")
    page = laptop.run("wiki", "show", "user").stdout
    assert f"feral memory resolve {record['id']} --keep" in page, page

    kept = record["versions"][[v["id"] for v in record["values"]].index(patel)]
    laptop.run("memory", "resolve", record["id"], "--keep", kept)
    converge(laptop, phone)
    for node in (laptop, phone):
        assert counted_everywhere(node) == (0, 0, 0)
        rows = export_rows(export(node))
        assert rows[("facts", patel)]["archived"] is False
        assert rows[("facts", lee)]["archived"] is True
        assert rows[("facts", chen)]["archived"] is True


@pytest.mark.slow
def test_every_losing_offline_edit_is_listed_not_only_the_first(mesh: Mesh) -> None:
    laptop, phone = mesh.add("laptop", "phone")
    pair_dialing(laptop, phone)
    fact = fact_id(laptop, "the dentist is on Elm Road")
    mesh.start(phone)
    converge(laptop, phone)

    # Apart: the laptop edits twice, the phone once; the laptop's final value is 4.
    laptop.run("memory", "boost", fact, "3")
    laptop.run("memory", "boost", fact, "4")
    phone.run("memory", "boost", fact, "5")
    converge(laptop, phone)

    (record,) = open_conflicts(laptop)
    assert open_conflicts(phone) == [record]
    shown = sorted(v["importance"] for v in record["values"])
    assert 4.0 in shown and 5.0 in shown, shown
    assert counted_everywhere(laptop) == counted_everywhere(phone) == (1, 1, 1)
    final = record["versions"][[v["importance"] for v in record["values"]].index(4.0)]
    laptop.run("memory", "resolve", record["id"], "--keep", final)
    converge(laptop, phone)
    assert importance(laptop, fact) == importance(phone, fact) == 4.0
    assert counted_everywhere(phone) == (0, 0, 0)
