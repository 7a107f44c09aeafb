"""Nothing dropped or archived without a word (issue 24), through real ``feral`` processes: a
look-alike import names each merged and superseding line by number, ``--keep-both`` writes
them, and ``remember`` says which row a duplicate was merged into."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .helpers import feral_process

LINES = [
    "take 5 mg of melatonin at night",
    "take 5 g of melatonin at night",  # a look-alike: written
    "take 5 mg of melatonin at night",  # the very same line: merged
    "Take 5 mg of melatonin at night!",  # the same words: merged
    json.dumps({"subject": "user", "predicate": "lives_in", "object": "Porto"}),
    json.dumps({"subject": "user", "predicate": "lives_in", "object": "Lisbon"}),  # supersedes
    "the spare key is under the left flowerpot",
    "the spare key is under the right flowerpot",  # a look-alike: written
]


def _ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stderr
    return result


def _home(tmp_path: Path, name: str) -> Path:
    home = tmp_path / name
    _ok(feral_process(home, "init"))
    return home


def _source(tmp_path: Path) -> Path:
    path = tmp_path / "facts.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return path


def _exported_facts(home: Path) -> dict[str, bool]:
    lines = _ok(feral_process(home, "memory", "export")).stdout.splitlines()
    rows = [json.loads(line) for line in lines]
    return {str(r["object"]): bool(r["archived"]) for r in rows if r["table"] == "facts"}


@pytest.mark.slow
def test_a_look_alike_import_names_each_merged_and_superseding_line(tmp_path):
    home, source = _home(tmp_path, "home"), _source(tmp_path)
    answer = json.loads(_ok(feral_process(home, "memory", "import", str(source), "--json")).stdout)
    assert [m["line"] for m in answer["merged"]] == [3, 4]
    assert [s["line"] for s in answer["superseded"]] == [6]
    assert answer["new_facts"] == 6
    facts = _exported_facts(home)
    assert facts["take 5 g of melatonin at night"] is False  # never merged into the 5 mg
    assert facts["the spare key is under the right flowerpot"] is False
    assert facts["Porto"] is True and facts["Lisbon"] is False
    merged_into = {m["into"] for m in answer["merged"]}
    assert len(merged_into) == 1  # both into the first line's row, which is named

    again = _home(tmp_path, "again")
    told = _ok(feral_process(again, "memory", "import", str(source))).stderr
    assert "line 3: duplicate of" in told and "line 4: duplicate of" in told
    assert "line 6: supersedes" in told and "memory restore" in told
    assert "line 2:" not in told and "line 8:" not in told  # look-alikes are written


@pytest.mark.slow
def test_keep_both_writes_what_import_and_remember_would_merge(tmp_path):
    home, source = _home(tmp_path, "home"), _source(tmp_path)
    answer = json.loads(
        _ok(feral_process(home, "memory", "import", str(source), "--keep-both", "--json")).stdout
    )
    assert [m["line"] for m in answer["merged"]] == [3]  # the same line: one row, always
    assert answer["superseded"] == [] and answer["new_facts"] == 7
    assert _exported_facts(home)["Porto"] is False

    said = ("memory", "remember", "take 5 mg of melatonin at night.")
    merged = _ok(feral_process(home, *said)).stdout
    assert "duplicate, nothing written" in merged and "--keep-both" in merged
    kept = json.loads(_ok(feral_process(home, *said, "--keep-both", "--json")).stdout)
    assert kept["written"] is True and kept["classification"] == "related"


@pytest.mark.slow
def test_remember_prints_each_clause_of_a_compound_sentence(tmp_path):
    home = _home(tmp_path, "home")
    _ok(feral_process(home, "memory", "remember", "I live in Paris"))
    said = "I live in Lisbon now and my dentist is Dr. Silva"
    printed = _ok(feral_process(home, "memory", "remember", said)).stdout.splitlines()
    remembered = [line for line in printed if line.startswith("Remembered ")]
    assert [line.split(": ", 1)[1] for line in remembered] == [
        "user / lives_in / Lisbon",
        "user / dentist / Dr. Silva",
    ]
    assert any("supersedes" in line and "memory restore" in line for line in printed)
