"""``feral memory search``'s MMR options through the real CLI."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from feral.node.settings.config import load_settings, save_settings

from .helpers import feral, feral_json, init_home, turn_off_embeddings


@pytest.fixture(autouse=True)
def _initialised(tmp_path: Path) -> None:
    """Every case's home made by ``feral init`` first: no other command makes one."""
    init_home(tmp_path)
    init_home(tmp_path / "home")


def test_search_json_reports_mmr_and_notes(tmp_path):
    feral_json(tmp_path, "memory", "remember", "my doctor is Dr. Chen")
    found = feral_json(tmp_path, "memory", "search", "doctor", "--strategy", "fts", "--no-mmr")
    assert set(found) == {"results", "total", "query_time_ms", "strategy", "mmr", "notes"}
    assert (found["strategy"], found["mmr"], found["notes"]) == ("fts", False, [])


def test_mmr_asked_for_with_no_model_is_one_line_and_exit_1(tmp_path):
    turn_off_embeddings(tmp_path)
    feral_json(tmp_path, "memory", "remember", "my doctor is Dr. Chen")
    assert feral_json(tmp_path, "memory", "stats")["vector_search"].startswith("off")
    result = feral(tmp_path, "memory", "search", "doctor", "--mmr")
    assert result.exit_code == 1
    assert result.stderr.strip() == "Error: MMR needs embeddings: no embedding model is configured"


def test_mmr_on_in_settings_with_no_model_is_skipped_with_a_note(tmp_path):
    feral_json(tmp_path, "memory", "remember", "my doctor is Dr. Chen")
    settings = load_settings(tmp_path)
    save_settings(tmp_path, dataclasses.replace(
        settings, search=dataclasses.replace(settings.search, mmr=True)
    ))  # fmt: skip
    turn_off_embeddings(tmp_path)
    found = feral_json(tmp_path, "memory", "search", "doctor", "--strategy", "fts")
    assert found["mmr"] is False
    assert found["notes"] == ["mmr skipped: no embedding model is configured"]
    table = feral(tmp_path, "memory", "search", "doctor", "--strategy", "fts")
    assert table.exit_code == 0
    assert "note: mmr skipped" in table.stderr


def test_mmr_lambda_outside_0_to_1_is_a_usage_error(tmp_path):
    for value in ("-0.1", "1.5", "x"):
        result = feral(tmp_path, "memory", "search", "doctor", "--mmr-lambda", value)
        assert result.exit_code == 2, value
        assert "--mmr-lambda" in result.stderr
    ok = feral(tmp_path, "memory", "search", "doctor", "--mmr", "--mmr-lambda", "0.3", "--json")
    assert json.loads(ok.stdout)["total"] == 0
