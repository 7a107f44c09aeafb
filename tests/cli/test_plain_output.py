"""Output, spoken plainly: ``--json`` on every command that prints, ``entities`` as an array,
times in UTC with a ``Z``, and tables within 80 columns (issue 15, item 6)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest

from feral.cli.main import cli
from feral.cli.output import stamp
from feral.cli.sync.sync_commands import _when

from .helpers import feral, feral_json, init_home, turn_off_embeddings

NO_JSON = {
    "feral demo": "a guided tour on throw-away homes, for people",
    "feral mcp": "speaks the MCP protocol on stdout",
    "feral serve": "runs until stopped; its log is for people",
    "feral memory export": "writes JSON Lines already",
}


def leaves(command: click.Command, path: str = "feral") -> list[str]:
    if not isinstance(command, click.Group):
        return [path]
    found = [path] if command.invoke_without_command else []
    ctx = click.Context(command)
    for name in command.list_commands(ctx):  # through the lazy groups, as a user's call loads
        child = command.get_command(ctx, name)
        assert child is not None, f"{path} {name}"
        found.extend(leaves(child, f"{path} {name}"))
    return found


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = init_home(tmp_path / "home")
    turn_off_embeddings(home)
    return home


def test_every_command_that_prints_takes_json() -> None:
    missing = []
    for path in leaves(cli):
        command = cli
        for name in path.split()[1:]:
            assert isinstance(command, click.Group)
            child = command.get_command(click.Context(command), name)
            assert child is not None, path
            command = child
        if path not in NO_JSON and "--json" not in {o for p in command.params for o in p.opts}:
            missing.append(path)
    assert missing == []


def test_node_id_import_nuke_and_wiki_show_answer_json(home: Path) -> None:
    ids = feral_json(home, "sync", "node-id")
    assert isinstance(ids, dict) and len(ids["node_id"]) == 32 and ids["name"]
    source = home.parent / "facts.txt"
    source.write_text("Alice's birthday is on May 4\nI like green tea\n", encoding="utf-8")
    imported = {"lines": 2, "new_facts": 2, "merged": [], "superseded": []}
    assert feral_json(home, "memory", "import", str(source)) == imported
    (row,) = [r for r in feral_json(home, "memory", "list")  # type: ignore[union-attr]
              if "tea" in r["content"]]  # fmt: skip
    erased = feral_json(home, "memory", "nuke", row["id"], "--yes")
    assert isinstance(erased, dict) and erased["id"] == row["id"]
    assert feral(home, "wiki", "compile").exit_code == 0
    (topic,) = [p["topic"] for p in feral_json(home, "wiki", "list")]  # type: ignore[union-attr]
    page = feral_json(home, "wiki", "show", topic)
    assert isinstance(page, dict) and page["topic"] == topic and "May 4" in page["markdown"]
    cert = feral_json(home, "sync", "cert")
    assert isinstance(cert, dict) and cert["pem"].startswith("-----BEGIN CERTIFICATE-----")


def test_entities_are_a_json_array(home: Path) -> None:
    talk = home.parent / "talk.jsonl"
    talk.write_text(json.dumps({"session": "s", "role": "user",
                                "content": "Alice flew to Lisbon with Bob"}) + "\n")  # fmt: skip
    assert feral(home, "memory", "ingest", str(talk)).exit_code == 0
    (episode,) = feral_json(home, "memory", "episodes")  # type: ignore[misc]
    assert isinstance(episode["entities"], list)
    assert {"Bob", "Lisbon"} <= set(episode["entities"])


def test_times_are_utc_with_a_z() -> None:
    assert _when(0) == "1970-01-01 00:00Z"
    assert _when(None) == "never"
    assert stamp((1_796_145_843_983 << 16) | 3) == "2026-12-01 17:24:03.983Z #3"


def test_status_shows_the_stamp_as_a_utc_time(home: Path) -> None:
    assert feral(home, "memory", "remember", "I live in Porto").exit_code == 0
    (line,) = [x for x in feral(home, "sync", "status").stdout.splitlines() if x.startswith("hlc")]
    assert re.fullmatch(r"hlc\s+\d+ \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z #\d+\)", line)


def long_text(n: int) -> str:
    return f"note {n}: " + "the quick brown fox jumps over the lazy dog " * 3


def test_tables_fit_80_columns(home: Path, tmp_path: Path) -> None:
    for n in range(3):
        assert feral(home, "memory", "remember", long_text(n)).exit_code == 0
    peer = feral(init_home(tmp_path / "peer"), "sync", "node-id").stdout.strip()
    url = "ws://127.0.0.1:9/" + "a-rather-long-path" * 3
    assert feral(home, "sync", "peers", "add", url, "--node-id", peer).exit_code == 0
    for args in (
        ("memory", "search", "fox", "--strategy", "fts"),
        ("memory", "list"),
        ("memory", "stats"),
        ("sync", "peers"),
        ("sync", "status"),
    ):
        result = feral(home, *args)
        assert result.exit_code == 0, (args, result.output)
        wide = [line for line in result.stdout.splitlines() if len(line) > 80]
        assert wide == [], args


def test_tables_keep_whole_memory_ids(home: Path) -> None:
    row = feral_json(home, "memory", "remember", long_text(1))
    assert isinstance(row, dict)
    table = feral(home, "memory", "search", "fox", "--strategy", "fts").stdout
    assert re.search(rf"\b{row['id']}\b", table)
