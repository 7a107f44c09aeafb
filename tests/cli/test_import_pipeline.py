"""``feral memory import`` through the absorb pipeline, and an export imported as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .helpers import feral, feral_json


def write_lines(path: Path, *items: object) -> Path:
    path.write_text(
        "".join((item if isinstance(item, str) else json.dumps(item)) + "\n" for item in items),
        encoding="utf-8",
    )
    return path


def exported(home: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in feral(home, "memory", "export").stdout.splitlines()]


def facts(home: Path) -> dict[str, bool]:
    """Each fact's object and whether it is archived."""
    rows = [row for row in exported(home) if row["table"] == "facts"]
    return {str(row["object"]): bool(row["archived"]) for row in rows}


def test_import_classifies_each_line_against_the_store_and_the_lines_before(tmp_path):
    home = tmp_path / "home"
    feral(home, "init")
    chen = feral_json(home, "memory", "remember", "my doctor is Dr. Chen")
    assert chen["classification"] == "new"  # type: ignore[index]
    source = write_lines(
        tmp_path / "facts.jsonl",
        {"subject": "user", "predicate": "doctor", "object": "Dr. Lee"},
        {"subject": "user", "predicate": "doctor_name", "object": "Dr. Lee"},  # the same value
        {"subject": "user", "predicate": "lives_in", "object": "Porto"},
        {"subject": "user", "predicate": "lives_in", "object": "Lisbon"},
        "backups run at 2am",
    )
    result = feral(home, "memory", "import", str(source))
    assert result.exit_code == 0, result.output
    assert "Imported 5 line(s): 4 new fact(s)" in result.stderr
    assert facts(home) == {"Dr. Chen": True, "Dr. Lee": False, "Porto": True, "Lisbon": False,
                           "backups run at 2am": False}  # fmt: skip
    edges = [row for row in exported(home) if row["table"] == "edges"]
    assert sorted(edge["type"] for edge in edges).count("supersedes") == 2


def test_an_export_imported_into_its_own_home_changes_nothing(tmp_path):
    home = tmp_path / "home"
    feral(home, "init")
    for text in ("my doctor is Dr. Chen", "my doctor is now Dr. Lee", "I like green tea"):
        feral(home, "memory", "remember", text)
    before = feral(home, "memory", "export").stdout
    dump = tmp_path / "export.jsonl"
    dump.write_text(before, encoding="utf-8")
    result = feral(home, "memory", "import", str(dump))
    assert result.exit_code == 0, result.output
    assert "left out" in result.stderr and "edges" in result.stderr
    assert "0 new fact(s)" in result.stderr
    assert feral(home, "memory", "export").stdout == before


def test_an_export_imported_elsewhere_brings_its_facts_as_they_were(tmp_path):
    laptop, phone = tmp_path / "laptop", tmp_path / "phone"
    feral(laptop, "init")
    feral(phone, "init")
    for text in ("my doctor is Dr. Chen", "my doctor is now Dr. Lee"):
        feral(laptop, "memory", "remember", text)
    dump = tmp_path / "export.jsonl"
    dump.write_text(feral(laptop, "memory", "export").stdout, encoding="utf-8")
    assert feral(phone, "memory", "import", str(dump)).exit_code == 0
    assert facts(phone) == facts(laptop) == {"Dr. Chen": True, "Dr. Lee": False}
    ids = {str(row["id"]) for row in exported(laptop) if row["table"] == "facts"}
    assert {str(row["id"]) for row in exported(phone) if row["table"] == "facts"} == ids


@pytest.mark.slow
def test_a_large_import_is_classified_line_by_line_too(tmp_path):
    """Past the 1,000 lines a stopgap once wrote as given, every line is still classified: a
    near-duplicate of line 7 at line 1,500 is merged, a new value at the end supersedes."""
    home = tmp_path / "home"
    feral(home, "init")
    feral(home, "memory", "remember", "my doctor is Dr. Chen")
    lines: list[object] = [f"note {i} about the garden bed {i * 7919 % 10007}" for i in range(1499)]
    lines[7] = "the tomatoes on the south bed need staking before the storm"
    lines += [
        "really the tomatoes on the south bed need staking before the storm",
        *(f"entry {i} in the shed log" for i in range(500)),
        {"subject": "user", "predicate": "doctor", "object": "Dr. Lee"},
    ]
    result = feral(home, "memory", "import", str(write_lines(tmp_path / "big.txt", *lines)))
    assert result.exit_code == 0, result.output
    assert "without classifying" not in result.stderr
    assert "Imported 2001 line(s): 2000 new fact(s)" in result.stderr
    state = facts(home)
    assert state["Dr. Chen"] is True and state["Dr. Lee"] is False
    assert "really the tomatoes on the south bed need staking before the storm" not in state
    edges = [row for row in exported(home) if row["table"] == "edges"]
    assert [edge["type"] for edge in edges].count("supersedes") == 1
