"""``feral memory ingest``, phrasing in ``feral memory remember`` and ``feral wiki ...``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from feral.node.assistant.working_memory import Message, WorkingMemory
from feral.node.settings.config import MemorySettings, Settings, save_settings
from tests.node.transcripts import SESSIONS, write_transcript

from .helpers import feral, feral_json, init_home


@pytest.fixture(autouse=True)
def _initialised(tmp_path: Path) -> None:
    """Every case's home made by ``feral init`` first: no other command makes one."""
    init_home(tmp_path)
    init_home(tmp_path / "home")


def expected_episodes(messages: list[Message], settings: MemorySettings) -> int:
    """What the working-memory model says an ingest of ``messages`` stores."""
    buffers: dict[str, WorkingMemory] = {}
    count = 0
    for m in messages:
        memory = buffers.setdefault(
            m.session,
            WorkingMemory(m.session, settings.working_memory_budget, settings.compaction_trigger),
        )
        count += bool(memory.add(m.role, m.content))
    return count + sum(bool(memory.flush()) for memory in buffers.values())


def assert_one_line_error(result, *fragments: str) -> None:
    assert result.exit_code == 1, result.output
    message = result.stderr.strip()
    assert "\n" not in message and message.startswith("Error: "), message
    for fragment in fragments:
        assert fragment in message, message


def assert_nothing_stored(home: Path) -> None:
    stats = feral_json(home, "memory", "stats")
    assert stats["delta_log_entries"] == 0
    assert all(tier["live"] == 0 for tier in stats["tiers"].values())


# Ingest


def test_a_long_transcript_becomes_episodes_for_both_sessions(tmp_path):
    messages = write_transcript(tmp_path / "talk.jsonl", 300)
    expected = expected_episodes(messages, MemorySettings())
    assert expected > len(SESSIONS)  # so the transcript really compacts mid-way

    result = feral(tmp_path / "home", "memory", "ingest", str(tmp_path / "talk.jsonl"))
    assert result.exit_code == 0, result.output
    assert (
        result.stdout
        == f"Ingested 300 message(s) from 2 session(s): {expected} episode(s), 0 fact(s)\n"
    )

    episodes = feral_json(tmp_path / "home", "memory", "episodes", "--limit", "1000")
    assert isinstance(episodes, list) and len(episodes) == expected
    assert {e["session_id"] for e in episodes} == set(SESSIONS)
    for row in episodes:
        assert row["summary"] and len(row["summary"]) <= 600
        assert isinstance(row["entities"], list)  # an array, not JSON inside a string
    entities = {name for row in episodes for name in row["entities"]}
    assert {"Alice Smith", "@bob_jones", "Dr. Chen", "Vila Nova de Gaia"} <= entities


def test_the_budget_and_trigger_in_settings_decide_when_to_compact(tmp_path):
    messages = write_transcript(tmp_path / "talk.jsonl", 300)
    tight = MemorySettings(working_memory_budget=3000, compaction_trigger=0.6)
    save_settings(tmp_path / "home", Settings(memory=tight))
    expected = expected_episodes(messages, tight)
    assert expected > expected_episodes(messages, MemorySettings())

    result = feral(tmp_path / "home", "memory", "ingest", str(tmp_path / "talk.jsonl"), "--json")
    assert json.loads(result.stdout) == {
        "messages": 300,
        "episodes": expected,
        "sessions": 2,
        "facts": 0,
    }


def test_episodes_are_searchable_after_an_ingest(tmp_path):
    write_transcript(tmp_path / "talk.jsonl", 40)
    feral(tmp_path / "home", "memory", "ingest", str(tmp_path / "talk.jsonl"))
    found = feral_json(tmp_path / "home", "memory", "search", "cabinets", "--strategy", "fts")
    assert found["results"] and {r["tier"] for r in found["results"]} == {"episodic"}


def test_a_bad_line_ingests_nothing_and_the_error_names_the_line(tmp_path):
    write_transcript(tmp_path / "talk.jsonl", 300)
    lines = (tmp_path / "talk.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[249] = '{"session": "kitchen", "role": "user"}\n'
    (tmp_path / "talk.jsonl").write_text("".join(lines), encoding="utf-8")
    result = feral(tmp_path / "home", "memory", "ingest", str(tmp_path / "talk.jsonl"))
    assert_one_line_error(result, "line 250:", "'content' must be a string")
    assert_nothing_stored(tmp_path / "home")


def test_a_line_that_is_not_utf8_is_named(tmp_path):
    line = b'{"session": "s", "role": "user", "content": "ok"}\n\xff\n'
    (tmp_path / "talk.jsonl").write_bytes(line)
    result = feral(tmp_path / "home", "memory", "ingest", str(tmp_path / "talk.jsonl"))
    assert_one_line_error(result, "line 2: not UTF-8 text")
    assert_nothing_stored(tmp_path / "home")


def test_blank_lines_and_a_byte_order_mark_are_tolerated(tmp_path):
    line = json.dumps({"session": "s", "role": "user", "content": "Hello Porto."})
    (tmp_path / "talk.jsonl").write_text(f"\ufeff{line}\n\n{line}\n", encoding="utf-8")
    result = feral(tmp_path / "home", "memory", "ingest", str(tmp_path / "talk.jsonl"))
    assert result.stdout == "Ingested 2 message(s) from 1 session(s): 1 episode(s), 0 fact(s)\n"


def test_an_empty_transcript_stores_nothing(tmp_path):
    (tmp_path / "talk.jsonl").write_text("", encoding="utf-8")
    result = feral(tmp_path / "home", "memory", "ingest", str(tmp_path / "talk.jsonl"))
    assert result.stdout == "Ingested 0 message(s) from 0 session(s): 0 episode(s), 0 fact(s)\n"


def test_the_progress_bar_is_hidden_when_stderr_is_not_a_terminal(tmp_path):
    write_transcript(tmp_path / "talk.jsonl", 10)
    result = feral(tmp_path / "home", "memory", "ingest", str(tmp_path / "talk.jsonl"))
    assert result.exit_code == 0
    assert result.stderr == ""


# Remember: phrasing


def test_remember_turns_a_phrasing_into_a_triple(tmp_path):
    row = feral_json(tmp_path, "memory", "remember", "my doctor's name is Dr. Chen")
    assert (row["subject"], row["predicate"], row["object"]) == ("user", "doctor_name", "Dr. Chen")
    plain = feral(tmp_path, "memory", "remember", "Alice's birthday is on May 4").stdout
    assert plain == f"Remembered {plain.split()[1]} Alice / birthday / May 4\n"


def test_explicit_parts_with_text_are_refused(tmp_path):
    # TEXT used to be ignored silently when the parts were given (issue 15: refused instead)
    result = feral(
        tmp_path, "memory", "remember", "I live in Porto",
        "--subject", "Bob", "--predicate", "lives_in", "--object", "Lisbon",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "not both" in result.stderr


def test_the_same_fact_remembered_twice_is_one_row(tmp_path):
    first = feral_json(tmp_path, "memory", "remember", "I live in Porto.")
    again = feral_json(tmp_path, "memory", "remember", "i live in  porto")
    assert first["id"] == again["id"]
    assert feral_json(tmp_path, "memory", "stats")["tiers"]["semantic"]["live"] == 1


# Wiki


def remember_all(home: Path, *texts: str) -> None:
    for text in texts:
        assert feral(home, "memory", "remember", text).exit_code == 0


def test_wiki_compile_list_and_show(tmp_path):
    # Two live values, as an export of two devices that each superseded one doctor holds them
    # (an export's facts are imported as they were; remember or a new line would supersede).
    lines = tmp_path / "facts.jsonl"
    exported = {"table": "facts", "hlc": 1, "origin": "x", "archived": False}
    lines.write_text(
        "".join(
            json.dumps({**exported, "subject": "user", "predicate": "doctor_name", "object": name})
            + "\n"
            for name in ("Dr. Chen", "Dr. Lee")
        )
    )
    assert feral(tmp_path, "memory", "import", str(lines)).exit_code == 0
    remember_all(tmp_path, "Alice's birthday is on May 4")
    compiled = feral(tmp_path, "wiki", "compile")
    assert compiled.stdout == (
        f"Compiled 2 page(s) in {tmp_path / 'wiki'}\nNeeds review (conflicting facts): user\n"
    )
    listed = feral_json(tmp_path, "wiki", "list")
    assert [(p["topic"], p["path"], p["needs_review"]) for p in listed] == [
        ("Alice", "wiki/alice.md", False),
        ("user", "wiki/user.md", True),
    ]
    table = feral(tmp_path, "wiki", "list").stdout.splitlines()
    assert table[0].split() == ["topic", "sources", "review", "path"]
    page = feral(tmp_path, "wiki", "show", "ALICE").stdout
    assert page == (tmp_path / "wiki" / "alice.md").read_text(encoding="utf-8")
    assert "- **birthday**: May 4" in page


def test_wiki_compile_json_is_the_index(tmp_path):
    remember_all(tmp_path, "I live in Porto")
    index = feral_json(tmp_path, "wiki", "compile")
    assert isinstance(index, list) and [p["topic"] for p in index] == ["user"]
    assert index == feral_json(tmp_path, "wiki", "list")


def test_wiki_show_refuses_a_path(tmp_path):
    remember_all(tmp_path, "I live in Porto")
    feral(tmp_path, "wiki", "compile")
    (tmp_path / "x.md").write_text('---\ntopic: "x"\nsources: []\n---\nsecret\n', encoding="utf-8")
    result = feral(tmp_path, "wiki", "show", "../x")
    assert_one_line_error(result, "refused: '../x' is a path, not a wiki topic")
    assert "secret" not in result.output


def test_wiki_show_of_an_unknown_topic_fails(tmp_path):
    result = feral(tmp_path, "wiki", "show", "nobody")
    assert_one_line_error(result, "no wiki page for 'nobody'")
