"""``feral memory ...`` through the real CLI, on real homes."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from feral.cli.memory.memory_transfer_commands import parse_import_line
from feral.sync.errors import InvalidInput

from .helpers import feral, feral_json, feral_process, init_home, turn_off_embeddings


@pytest.fixture(autouse=True)
def _initialised(tmp_path: Path) -> None:
    """Every case's home made by ``feral init`` first: no other command makes one."""
    init_home(tmp_path)
    init_home(tmp_path / "home")


def remember(home, *args):
    return feral_json(home, "memory", "remember", *args)


def test_init_creates_a_private_home_and_prints_the_node_id(tmp_path):
    home = tmp_path / "home"
    result = feral(home, "init", "--name", "laptop")
    assert result.exit_code == 0
    node_id = result.stdout.strip()
    assert len(node_id) == 32
    assert stat.S_IMODE(os.stat(home).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(home / "settings.json").st_mode) == 0o600
    assert json.loads((home / "settings.json").read_text())["name"] == "laptop"
    assert feral(home, "sync", "node-id").stdout.strip() == node_id


def test_remember_then_search_then_export(tmp_path):
    row = remember(tmp_path, "my doctor's name is Dr. Chen")
    assert (row["subject"], row["predicate"], row["object"]) == ("user", "doctor_name", "Dr. Chen")
    found = feral_json(tmp_path, "memory", "search", "doctor")
    assert [r["id"] for r in found["results"]] == [row["id"]]
    assert found["results"][0]["tier"] == "semantic"
    assert 0 < found["results"][0]["score"] <= 1
    exported = [
        json.loads(line) for line in feral(tmp_path, "memory", "export").stdout.splitlines()
    ]
    # The fact, and its meta row (its category) under the same id.
    assert [(line["table"], line["id"]) for line in exported] == [
        ("facts", row["id"]),
        ("memory_meta", row["id"]),
    ]


def test_remembering_the_same_fact_twice_keeps_one_row(tmp_path):
    first = remember(tmp_path, "--subject", "Alice", "--predicate", "birthday", "--object", "May 4")
    again = remember(
        tmp_path, "--subject", "alice", "--predicate", "Birthday", "--object", "may  4"
    )
    assert first["id"] == again["id"]
    stats = feral_json(tmp_path, "memory", "stats")
    assert stats["tiers"]["semantic"]["live"] == 1
    assert stats["delta_log_entries"] == 2  # the fact and its meta row, each written once


def test_forget_hides_a_memory_and_restore_brings_it_back(tmp_path):
    row = remember(tmp_path, "the dentist moved to Thursday")
    assert feral(tmp_path, "memory", "forget", row["id"]).exit_code == 0
    assert feral_json(tmp_path, "memory", "search", "dentist")["results"] == []
    assert feral(tmp_path, "memory", "restore", row["id"]).exit_code == 0
    assert len(feral_json(tmp_path, "memory", "search", "dentist")["results"]) == 1


def test_nuke_needs_yes_and_leaves_a_tombstone(tmp_path):
    row = remember(tmp_path, "a secret I regret")
    refused = feral(tmp_path, "memory", "nuke", row["id"])
    assert refused.exit_code == 2
    assert feral(tmp_path, "memory", "nuke", row["id"], "--yes").exit_code == 0
    lines = [json.loads(text) for text in feral(tmp_path, "memory", "export").stdout.splitlines()]
    (line,) = [line for line in lines if line["table"] == "facts"]
    assert line["deleted"] is True and line["object"] == ""
    assert feral_json(tmp_path, "memory", "search", "secret")["results"] == []


def test_an_unknown_id_is_one_line_on_stderr_and_exit_1(tmp_path):
    remember(tmp_path, "something")
    before = feral(tmp_path, "memory", "export").stdout
    for command in ("forget", "restore"):
        result = feral(tmp_path, "memory", command, "no-such-id")
        assert result.exit_code == 1
        assert result.stderr == "Error: no memory with id 'no-such-id'\n"
    assert feral(tmp_path, "memory", "export").stdout == before


def test_a_malformed_settings_file_names_the_key_and_changes_nothing(tmp_path):
    remember(tmp_path, "something")
    before = feral(tmp_path, "memory", "export").stdout
    (tmp_path / "settings.json").write_text('{"sync": {"max_clock_skew_ms": "abc"}}')
    result = feral(tmp_path, "memory", "remember", "another thing")
    assert result.exit_code == 1
    assert "sync.max_clock_skew_ms" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    (tmp_path / "settings.json").write_text("{}")
    assert feral(tmp_path, "memory", "export").stdout == before


def test_settings_that_are_not_json_give_the_line_and_column(tmp_path):
    feral(tmp_path, "init")
    (tmp_path / "settings.json").write_text('{\n  "memory": {,}\n}')
    result = feral(tmp_path, "memory", "stats")
    assert result.exit_code == 1
    assert "line 2" in result.stderr
    assert "Traceback" not in result.stderr


def test_import_loads_text_and_json_lines(tmp_path):
    source = tmp_path / "facts.jsonl"
    source.write_text(
        "plain note one\n"
        '{"subject": "Bob", "predicate": "lives_in", "object": "Porto"}\n'
        "\n"
        '{"fact": "plain note two"}\n'
        "plain note one\n",
        encoding="utf-8",
    )
    result = feral(tmp_path / "home", "memory", "import", str(source))
    assert result.exit_code == 0, result.output
    stats = feral_json(tmp_path / "home", "memory", "stats")
    assert stats["tiers"]["semantic"]["live"] == 3


def test_import_with_a_bad_line_writes_nothing(tmp_path):
    source = tmp_path / "facts.jsonl"
    source.write_text('fine\n{"subject": 1}\n', encoding="utf-8")
    result = feral(tmp_path / "home", "memory", "import", str(source))
    assert result.exit_code == 1
    assert "line 2" in result.stderr
    assert feral(tmp_path / "home", "memory", "export").stdout == ""


@pytest.mark.parametrize("line", ['{"subject": 1}', "{not json", '{"fact": " "}'])
def test_a_bad_import_line_is_invalid_input_naming_the_line(line):
    with pytest.raises(InvalidInput, match="^line 4: "):
        parse_import_line(line, 4)


def test_episodes_lists_newest_first_as_json(tmp_path):
    assert feral_json(tmp_path, "memory", "episodes") == []


def test_vector_search_without_a_model_is_a_clear_error(tmp_path):
    turn_off_embeddings(tmp_path)
    result = feral(tmp_path, "memory", "search", "anything", "--strategy", "vector")
    assert result.exit_code == 1
    assert "no embedding model" in result.stderr
    stats = feral_json(tmp_path, "memory", "stats")
    assert stats["vector_search"].startswith("off")


def test_usage_errors_exit_2(tmp_path):
    assert feral(tmp_path, "memory", "remember").exit_code == 2
    assert feral(tmp_path, "memory", "remember", "--subject", "x").exit_code == 2
    assert feral(tmp_path, "memory", "search", "x", "--strategy", "magic").exit_code == 2


def test_memory_export_o_creates_a_world_readable_file(tmp_path):
    remember(tmp_path, "my doctor's name is Dr. Chen")
    expected = feral(tmp_path, "memory", "export").stdout
    new = tmp_path / "export.jsonl"
    previous = os.umask(0o022)  # the usual umask, which leaves new files world-readable
    try:
        assert feral(tmp_path, "memory", "export", "-o", str(new)).exit_code == 0
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o600
    assert new.read_text(encoding="utf-8") == expected


def test_memory_export_o_still_writes_to_an_existing_file_and_to_stdout(tmp_path):
    remember(tmp_path, "my doctor's name is Dr. Chen")
    expected = feral(tmp_path, "memory", "export").stdout
    existing = tmp_path / "existing.jsonl"
    existing.write_text("an older, longer export that must not survive at its end\n" * 9)
    os.chmod(existing, 0o640)
    assert feral(tmp_path, "memory", "export", "-o", str(existing)).exit_code == 0
    assert existing.read_text(encoding="utf-8") == expected
    assert stat.S_IMODE(os.stat(existing).st_mode) == 0o640  # the user's file keeps its mode
    piped = feral_process(tmp_path, "memory", "export", "-o", "/dev/stdout")
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == expected
