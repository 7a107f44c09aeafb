"""``feral sync prune`` and the pruning figures of ``feral memory stats``, on a real home."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

from feral.node.settings.config import load_settings, save_settings

from .helpers import feral, feral_json, turn_off_embeddings

RETENTION_DAYS = 1e-5
"""About 0.9 s: entries written before the test waits are older than the window after it."""


def _short_window(home: Path) -> None:
    settings = load_settings(home)
    sync = dataclasses.replace(settings.sync, retention_days=RETENTION_DAYS)
    save_settings(home, dataclasses.replace(settings, sync=sync))


def _wait_past_the_window() -> None:
    time.sleep(RETENTION_DAYS * 86_400 * 2)  # the wall clock only moves on: no race


def test_prune_collects_old_entries_and_tombstones_and_keeps_every_row(tmp_path: Path) -> None:
    feral(tmp_path, "init", "--name", "laptop")
    turn_off_embeddings(tmp_path)
    kept = feral_json(tmp_path, "memory", "remember", "my doctor is Dr. Chen")
    gone = feral_json(tmp_path, "memory", "remember", "the old car was blue")
    assert feral(tmp_path, "memory", "nuke", gone["id"], "--yes").exit_code == 0
    before = feral(tmp_path, "memory", "export").stdout
    fresh = feral_json(tmp_path, "sync", "prune", "--dry-run")
    assert fresh["prunable_entries"] == 0 and fresh["prunable_tombstones"] == 0  # too young
    _short_window(tmp_path)
    _wait_past_the_window()
    planned = feral_json(tmp_path, "sync", "prune", "--dry-run")
    assert planned["dry_run"] and planned["prunable_entries"] == planned["log_entries"] > 0
    assert planned["prunable_tombstones"] >= 1
    assert feral(tmp_path, "memory", "export").stdout == before  # a dry run removes nothing
    done = feral(tmp_path, "sync", "prune")
    assert done.exit_code == 0 and "removed" in done.stdout
    stats = feral_json(tmp_path, "memory", "stats")
    assert stats["delta_log_entries"] == 0
    assert stats["prune"]["prunable_entries"] == 0
    lines = feral(tmp_path, "memory", "export").stdout.splitlines()
    exported = [json.loads(line) for line in lines]
    assert {row["id"] for row in exported if not row["deleted"]} == {kept["id"]}
    assert gone["id"] in {row["id"] for row in exported if row["deleted"]}  # tombstones stay
    again = feral_json(tmp_path, "memory", "remember", "my dentist is Dr. Ng")
    assert feral_json(tmp_path, "memory", "stats")["delta_log_entries"] >= 1
    assert again["hlc"] > kept["hlc"]
    assert "prunable" in feral(tmp_path, "memory", "stats").stdout
