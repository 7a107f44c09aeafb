"""``feral memory boost|list|gc|distill`` and ``--scope`` through the real CLI, on real homes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from .helpers import feral, feral_json, turn_off_embeddings

DAY_MS = 86_400_000
LIKES = ["green tea", "oolong", "chai", "matcha"]


def remember(home: Path, *args: str) -> str:
    row = feral_json(home, "memory", "remember", *args)
    assert isinstance(row, dict)
    return str(row["id"])


def listed(home: Path, *args: str) -> list[dict[str, object]]:
    rows = feral_json(home, "memory", "list", *args)
    assert isinstance(rows, list)
    return rows


def files_digest(home: Path) -> str:
    """The database and its WAL, byte for byte."""
    digest = hashlib.sha256()
    for name in ("feral.db", "feral.db-wal"):
        path = home / name
        digest.update(path.read_bytes() if path.exists() else b"-")
    return digest.hexdigest()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A home with facts written 60 days ago (two stale session facts, four "likes") and a
    fresh session fact; returns their ids by name."""
    turn_off_embeddings(tmp_path)
    monkeypatch.setenv("FERAL_CLOCK_OFFSET_MS", str(-60 * DAY_MS))
    ids = {
        "old-s1": remember(tmp_path, "the hotel is the Ritz", "--scope", "session:s1"),
        "old-s2": remember(tmp_path, "the gate is B12", "--scope", "session:s2"),
    }
    for like in LIKES:
        triple = ("--subject", "user", "--predicate", "likes", "--object", like)
        ids[like] = remember(tmp_path, *triple)
    monkeypatch.delenv("FERAL_CLOCK_OFFSET_MS")
    ids["new-s1"] = remember(tmp_path, "the taxi is booked for 9", "--scope", "session:s1")
    return ids


def test_scopes_filter_list_search_and_stats(tmp_path, home):
    session = listed(tmp_path, "--scope", "session:s1")
    assert [r["id"] for r in session] == [home["new-s1"], home["old-s1"]]  # newest first
    assert {r["meta"]["scope"] for r in session} == {"session:s1"}  # type: ignore[index]
    assert len(listed(tmp_path, "--scope", "user")) == len(LIKES)
    found = feral_json(tmp_path, "memory", "search", "gate hotel taxi", "--scope", "session:s2")
    assert [h["id"] for h in found["results"]] == [home["old-s2"]]  # type: ignore[index]
    stats = feral_json(tmp_path, "memory", "stats", "--scope", "session:s1")
    assert stats["scope"] == "session:s1"  # type: ignore[index]
    assert stats["tiers"]["semantic"] == {"live": 2, "archived": 0, "deleted": 0}  # type: ignore[index]


def test_a_malformed_scope_is_one_line_and_exit_1(tmp_path):
    turn_off_embeddings(tmp_path)
    for command in (("remember", "x"), ("list",), ("search", "x"), ("stats",)):
        result = feral(tmp_path, "memory", *command, "--scope", "session:has space")
        assert result.exit_code == 1, result.output
        assert len(result.stderr.strip().splitlines()) == 1
        assert "scope must be" in result.stderr


def test_list_orders_the_same_for_the_same_rows_and_filters_tier_and_status(tmp_path, home):
    first = feral(tmp_path, "memory", "list", "--status", "all", "--json").stdout
    assert first == feral(tmp_path, "memory", "list", "--status", "all", "--json").stdout
    assert len(json.loads(first)) == len(home)
    assert listed(tmp_path, "--tier", "episodic") == []
    assert len(listed(tmp_path, "-n", "2")) == 2
    feral(tmp_path, "memory", "forget", home["chai"])
    archived = listed(tmp_path, "--status", "archived")
    assert [(r["id"], r["status"]) for r in archived] == [(home["chai"], "archived")]


def test_gc_dry_run_writes_nothing_and_the_real_run_archives_and_consolidates(tmp_path, home):
    feral(tmp_path, "memory", "stats")  # whatever opening a node writes, written now
    export, files = feral(tmp_path, "memory", "export").stdout, files_digest(tmp_path)
    planned = feral_json(tmp_path, "memory", "gc", "--compact-above", "3", "--dry-run")
    assert files_digest(tmp_path) == files
    assert feral(tmp_path, "memory", "export").stdout == export
    assert planned["dry_run"] is True  # type: ignore[index]
    assert {r["id"] for r in planned["archived"]} == {home["old-s1"], home["old-s2"]}  # type: ignore[index]
    (group,) = planned["groups"]  # type: ignore[index]
    assert [m["id"] for m in group["members"]] == [home[like] for like in LIKES]

    done = feral_json(tmp_path, "memory", "gc", "--compact-above", "3")
    (made,) = done["groups"]  # type: ignore[index]
    merged = made["consolidated_id"]
    live = {r["id"]: r for r in listed(tmp_path)}
    assert set(live) == {home["new-s1"], merged}
    assert live[merged]["content"] == "user likes " + "; ".join(LIKES)
    archived = {r["id"] for r in listed(tmp_path, "--status", "archived")}
    assert archived == {home["old-s1"], home["old-s2"], *(home[like] for like in LIKES)}
    edges = [json.loads(line) for line in feral(tmp_path, "memory", "export").stdout.splitlines()]
    links = {(e["from_id"], e["to_id"]) for e in edges if e["table"] == "edges"}
    assert links == {(merged, home[like]) for like in LIKES}
    assert {e["type"] for e in edges if e["table"] == "edges"} == {"consolidated"}
    again = feral_json(tmp_path, "memory", "gc", "--compact-above", "3")
    assert again["archived"] == [] and again["groups"] == []  # type: ignore[index]


def test_gc_keeps_fresh_session_facts_and_never_groups_notes(tmp_path, home):
    for n in range(5):
        remember(tmp_path, f"note number {n}")
    done = feral_json(tmp_path, "memory", "gc", "--ttl-days", "90", "--compact-above", "4")
    assert done["archived"] == [] and done["groups"] == []  # type: ignore[index]


def test_distill_dry_run_writes_nothing_and_the_real_run_promotes(tmp_path, home):
    feral(tmp_path, "memory", "stats")
    export, files = feral(tmp_path, "memory", "export").stdout, files_digest(tmp_path)
    planned = feral_json(tmp_path, "memory", "distill", "--session", "s1", "--dry-run")
    assert files_digest(tmp_path) == files
    assert feral(tmp_path, "memory", "export").stdout == export
    assert [r["id"] for r in planned["promoted"]] == [home["old-s1"], home["new-s1"]]  # type: ignore[index]

    feral_json(tmp_path, "memory", "distill", "--session", "s1")
    assert listed(tmp_path, "--scope", "session:s1") == []
    user = {r["id"]: r for r in listed(tmp_path, "--scope", "user")}
    assert {home["old-s1"], home["new-s1"]} <= set(user)
    # Promoted, so updated now: a month-old session fact is no longer stale for gc.
    done = feral_json(tmp_path, "memory", "gc", "--ttl-days", "30")
    assert [r["id"] for r in done["archived"]] == [home["old-s2"]]  # type: ignore[index]


def test_boost_shows_in_list_and_out_of_range_is_refused(tmp_path, home):
    feral_json(tmp_path, "memory", "boost", home["chai"], "2.5", "--reason", "favourite")
    row = next(r for r in listed(tmp_path) if r["id"] == home["chai"])
    assert row["meta"]["importance"] == 2.5  # type: ignore[index]
    assert row["meta"]["importance_note"] == "favourite"  # type: ignore[index]
    for bad in ("0", "11", "-2"):
        assert feral(tmp_path, "memory", "boost", home["chai"], "--", bad).exit_code == 2
    missing = feral(tmp_path, "memory", "boost", "no-such-id", "2")
    assert missing.exit_code == 1 and "no memory with id" in missing.stderr


def test_nuke_by_scope_erases_that_scope_only_and_refuses_the_users(tmp_path, home):
    assert feral(tmp_path, "memory", "nuke", "--scope", "session:s1").exit_code == 2  # no --yes
    result = feral(tmp_path, "memory", "nuke", "--scope", "session:s1", "--yes")
    assert result.exit_code == 0 and "Deleted 2" in result.stdout
    export = feral(tmp_path, "memory", "export").stdout
    assert "the Ritz" not in export and "taxi" not in export
    assert "B12" in export
    assert listed(tmp_path, "--scope", "session:s1", "--status", "all") == []
    refused = feral(tmp_path, "memory", "nuke", "--scope", "user", "--yes")
    assert refused.exit_code == 1 and len(refused.stderr.strip().splitlines()) == 1
    assert len(listed(tmp_path, "--scope", "user")) == len(LIKES)
    both = feral(tmp_path, "memory", "nuke", home["chai"], "--scope", "session:s2", "--yes")
    assert both.exit_code == 2
