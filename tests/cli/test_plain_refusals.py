"""Options and input lines that would be ignored are refused, in one line (issue 15, item 6).

Each case is what a new user tried: TEXT with --subject stored the triple and dropped the
text; --mmr-lambda without --mmr changed nothing; ``[1, 2]`` was imported as a note; a key
or a role the ingest did not know was dropped without a word.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import Result

from feral.node.settings.config import load_settings, save_settings

from .helpers import feral, feral_json, init_home, set_embedder, turn_off_embeddings


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = init_home(tmp_path / "home")
    turn_off_embeddings(home)
    return home


def one_line(result: Result, exit_code: int) -> str:
    assert result.exit_code == exit_code, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    return lines[0]


def stored(home: Path) -> int:
    stats = feral_json(home, "memory", "stats")
    assert isinstance(stats, dict)
    return sum(tier["live"] for tier in stats["tiers"].values())


def test_text_with_a_triple_is_refused_and_nothing_is_stored(home: Path) -> None:
    result = feral(home, "memory", "remember", "I live in Porto",
                   "--subject", "Bob", "--predicate", "lives_in", "--object", "Lisbon")  # fmt: skip
    assert "not both" in one_line(result, 2)
    assert stored(home) == 0


def test_mmr_lambda_without_mmr_is_refused(home: Path) -> None:
    assert "--mmr-lambda needs --mmr" in one_line(
        feral(home, "memory", "search", "doctor", "--mmr-lambda", "0.3"), 2
    )
    assert "--mmr-lambda" in one_line(
        feral(home, "memory", "search", "doctor", "--no-mmr", "--mmr-lambda", "0.3"), 2
    )
    set_embedder(home, "minilm-static-256")  # MMR needs vectors
    with_mmr = feral(home, "memory", "search", "doctor", "--mmr", "--mmr-lambda", "0.3")
    assert with_mmr.exit_code == 0, with_mmr.output


def test_mmr_lambda_is_heard_when_settings_turn_mmr_on(home: Path) -> None:
    set_embedder(home, "minilm-static-256")  # MMR needs vectors
    settings = load_settings(home)
    save_settings(home, dataclasses.replace(settings, search=dataclasses.replace(
        settings.search, mmr=True)))  # fmt: skip
    result = feral(home, "memory", "search", "doctor", "--mmr-lambda", "0.3")
    assert result.exit_code == 0, result.output


def test_a_usage_error_is_one_line(home: Path) -> None:
    line = one_line(feral(home, "memory", "search", "doctor", "--top-k", "0"), 2)
    assert "--top-k" in line and "memory search -h" in line
    assert "No such option" in one_line(feral(home, "memory", "search", "x", "--bogus"), 2)


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ("a plain note\n[1, 2]\n", "line 2: a JSON value that is not an object"),
        ('"just a string"\n', "line 1: a JSON value that is not an object"),
        ('{"fact": "I like tea", "tags": ["x"]}\n', "line 1: unknown key 'tags'"),
        ('{"fact": "I like tea", "subject": "a"}\n', "line 1: give subject/predicate/object or"),
        ('I like tea\n{"subject": "a", "predicate": "b", "objet": "c"}\n', "line 2: unknown key"),
    ],
)
def test_import_refuses_lines_it_would_misread(home: Path, lines: str, expected: str) -> None:
    source = home.parent / "facts.txt"
    source.write_text(lines, encoding="utf-8")
    assert expected in one_line(feral(home, "memory", "import", str(source)), 1)
    assert stored(home) == 0


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ({"session": "s", "role": "bot", "content": "hi"}, "role 'bot' is not one of user,"),
        ({"session": "s", "role": "user", "content": "hi", "ts": 3}, "unknown key 'ts'"),
        (["s", "user", "hi"], "expected a JSON object"),
        ("hello", "expected a JSON object"),
    ],
)
def test_ingest_refuses_lines_it_would_misread(home: Path, line: object, expected: str) -> None:
    talk = home.parent / "talk.jsonl"
    good = json.dumps({"session": "s", "role": "user", "content": "I live in Porto"})
    talk.write_text(f"{good}\n{json.dumps(line)}\n", encoding="utf-8")
    error = one_line(feral(home, "memory", "ingest", str(talk)), 1)
    assert error.startswith("Error: line 2: ") and expected in error
    assert stored(home) == 0


@pytest.mark.parametrize("role", ["user", "assistant", "system", "tool"])
def test_the_four_roles_ingest(home: Path, role: str) -> None:
    talk = home.parent / "talk.jsonl"
    talk.write_text(json.dumps({"session": "s", "role": role, "content": "hi"}) + "\n")
    assert feral(home, "memory", "ingest", str(talk)).exit_code == 0


def test_re_pairing_says_what_changed(home: Path, tmp_path: Path) -> None:
    peer = feral(init_home(tmp_path / "peer"), "sync", "node-id").stdout.strip()
    first = feral(home, "sync", "peers", "add", "ws://127.0.0.1:9901", "--node-id", peer)
    assert first.stdout == f"Paired with {peer} at ws://127.0.0.1:9901\n"
    same = feral(home, "sync", "peers", "add", "ws://127.0.0.1:9901", "--node-id", peer)
    assert same.stdout == f"Already paired with {peer} at ws://127.0.0.1:9901; nothing changed\n"
    moved = feral(home, "sync", "peers", "add", "ws://127.0.0.1:9902", "--node-id", peer)
    assert moved.stdout == f"Re-paired {peer}: url ws://127.0.0.1:9901 -> ws://127.0.0.1:9902\n"
    accept = feral_json(home, "sync", "peers", "add", "--node-id", peer)
    assert accept == {
        "node_id": peer, "url": None, "insecure_plaintext": False, "change": "re-paired",
        "before": {"node_id": peer, "url": "ws://127.0.0.1:9902", "insecure_plaintext": False},
    }  # fmt: skip
    removed = feral_json(home, "sync", "peers", "remove", peer)
    assert removed == {"removed": [{"node_id": peer, "url": None, "insecure_plaintext": False}]}
