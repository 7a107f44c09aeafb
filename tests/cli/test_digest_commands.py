"""``feral memory digest`` and ``feral memory prompt`` through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from feral.storage.encoders.token_count import count_tokens

from .helpers import feral, feral_json, feral_process, turn_off_embeddings


@pytest.fixture
def home(tmp_path: Path) -> Path:
    turn_off_embeddings(tmp_path)
    for text in ("I like green tea", "remind me to buy oolong tea", "I live in Porto"):
        assert feral(tmp_path, "memory", "remember", text).exit_code == 0
    return tmp_path


def test_digest_prints_the_block_and_json_says_what_went_in(home: Path):
    printed = feral(home, "memory", "digest", "--topic", "tea")
    assert printed.exit_code == 0
    text = printed.stdout.rstrip("\n")
    assert text.startswith("<memory-context>\n") and text.endswith("\n</memory-context>")
    answer = feral_json(home, "memory", "digest", "--topic", "green", "--max-tokens", "300")
    assert isinstance(answer, dict)
    assert answer["tokens"] == count_tokens(answer["text"]) <= 300
    assert [i["text"] for i in answer["sections"]["relevant"]] == ["likes: green tea"]
    assert [i["text"] for i in answer["sections"]["todos"]] == ["remind me to buy oolong tea"]
    assert answer["reference"].endswith("Z")
    stale = feral_json(home, "memory", "digest", "--now", "2000-01-01T00:00:00Z")
    assert isinstance(stale, dict) and stale["sections"]["recent"] == []


@pytest.mark.parametrize(
    ("args", "words", "status"),
    [
        (["--max-tokens", "5"], "too small", 2),
        (["--now", "yesterday"], "ISO 8601", 2),
        (["--now", "2026-12-01T10:00:00"], "zone", 2),
        (["--scope", "nobody"], "scope", 1),  # as every command's --scope
    ],
)
def test_bad_options_are_refused_on_stderr(home: Path, args: list[str], words: str, status: int):
    done = feral_process(home, "memory", "digest", *args)
    assert done.returncode == status, done.stderr
    assert words in done.stderr and done.stdout == ""
    assert done.stderr.strip().splitlines()[-1].startswith("Error:")


def test_prompt_writes_both_files(home: Path):
    written = feral_json(home, "memory", "prompt")
    assert isinstance(written, list)
    assert [Path(f["path"]).name for f in written] == ["USER.md", "MEMORY.md"]
    user = (home / "prompt" / "USER.md").read_text()
    assert "## Preferences\n- likes: green tea\n" in user
    assert json.loads(json.dumps(written))[0]["shown"]["identity"] == 1
    plain = feral(home, "memory", "prompt")
    assert plain.exit_code == 0 and plain.stdout.startswith("Wrote ")
