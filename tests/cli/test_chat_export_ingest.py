"""``feral memory ingest`` of a chat export: a LoCoMo-shaped JSON list of conversations.

Each turn becomes one episode ``[date] speaker: text`` citing its ``dia_id``; a bad file
writes nothing and says what is wrong in one line.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.conversation_set import SYNTHETIC

from .helpers import feral, feral_json, feral_process, init_home
from .test_ingest_and_wiki import assert_nothing_stored, assert_one_line_error

TOKEN = "ghp_Zq7Lk2Xw9Pm4Rt6Yv8Bn3Cd5Fg1Hj0Ks7Qa3"


def synthetic() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(SYNTHETIC.read_text(encoding="utf-8"))
    return data


def said(data: list[dict[str, Any]]) -> set[tuple[str, str, str, str]]:
    """Every turn of ``data`` as ``(session_id, dia_id, speaker, "[date] speaker: text")``."""
    turns = set()
    for sample in data:
        conversation = sample["conversation"]
        for key, value in conversation.items():
            if key.startswith("session_") and isinstance(value, list):
                date = conversation[f"{key}_date_time"]
                for turn in value:
                    memory = f"[{date}] {turn['speaker']}: {turn['text']}"
                    session = f"{sample['sample_id']} {key}"
                    turns.add((session, turn["dia_id"], turn["speaker"], memory))
    return turns


def stored(home: Path) -> set[tuple[str, str, str, str]]:
    episodes = feral_json(home, "memory", "episodes", "--limit", "10000")
    assert isinstance(episodes, list)
    return {(e["session_id"], *e["entities"], e["summary"]) for e in episodes}


@pytest.mark.slow
def test_a_real_process_ingests_every_turn_as_an_episode_citing_it(tmp_path):
    home = init_home(tmp_path / "home")
    done = feral_process(home, "memory", "ingest", str(SYNTHETIC), timeout=120)
    assert done.returncode == 0, done.stderr
    turns = said(synthetic())
    sessions = {turn[0] for turn in turns}
    assert done.stdout == (
        f"Ingested {len(turns)} turn(s) from {len(sessions)} session(s): "
        f"{len(turns)} episode(s), 0 fact(s)\n"
    )
    assert stored(home) == turns


@pytest.mark.slow
def test_speaker_and_date_are_searchable(tmp_path):
    home = init_home(tmp_path / "home")
    feral(home, "memory", "ingest", str(SYNTHETIC))
    asked = ("memory", "search", "Tom 21 April 2024", "--strategy", "fts", "--top-k", "3")
    found = feral_json(home, *asked)
    assert isinstance(found, dict) and len(found["results"]) == 3
    contents = [hit["content"] for hit in found["results"]]
    assert all(c.startswith("[11:30 am on 21 April, 2024] ") for c in contents), contents
    assert any(c.startswith("[11:30 am on 21 April, 2024] Tom: ") for c in contents), contents


def test_the_json_answer_counts_turns_as_messages(tmp_path):
    home = init_home(tmp_path / "home")
    data = synthetic()[:1]
    (tmp_path / "chat.json").write_text(json.dumps(data), encoding="utf-8")
    answer = feral_json(home, "memory", "ingest", str(tmp_path / "chat.json"))
    turns = len(said(data))
    assert answer == {"messages": turns, "episodes": turns, "sessions": 3, "facts": 0}


def _broken(change: str) -> list[dict[str, Any]]:
    data = copy.deepcopy(synthetic())
    conversation = data[1]["conversation"]
    if change == "speaker":
        conversation["session_2"][3]["speaker"] = 7
    elif change == "stranger":
        conversation["session_2"][3]["speaker"] = "Mallory"
    elif change == "date":
        del conversation["session_2_date_time"]
    elif change == "key":
        conversation["sesion_4"] = []
    elif change == "twice":
        conversation["session_2"][3]["dia_id"] = conversation["session_2"][2]["dia_id"]
    elif change == "turn":
        conversation["session_2"][3] = "just text"
    return data


BAD = {
    "speaker": "conversation 2, session_2, turn 4: 'speaker' must be a string",
    "stranger": "speaker 'Mallory' is neither speaker_a nor speaker_b",
    "date": "conversation 2, session_2: 'session_2_date_time' must be a string",
    "key": "conversation 2: unknown key 'sesion_4' in 'conversation'",
    "twice": "conversation 2: turn id",
    "turn": "conversation 2, session_2, turn 4: expected an object",
}


@pytest.mark.parametrize("change", sorted(BAD))
def test_a_bad_turn_ingests_nothing_and_the_error_names_it(tmp_path, change):
    home = init_home(tmp_path / "home")
    (tmp_path / "chat.json").write_text(json.dumps(_broken(change)), encoding="utf-8")
    result = feral(home, "memory", "ingest", str(tmp_path / "chat.json"))
    assert_one_line_error(result, BAD[change])
    assert_nothing_stored(home)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[{", "invalid JSON"),
        ("[]", "expected a JSON list of conversations"),
        ("[1]", "read as a chat export"),
        ('["s", "user", "hi"]\n{"session": "s", "role": "user", "content": "hi"}\n', "Extra data"),
    ],
)
def test_a_file_that_is_not_a_conversation_list_is_refused_by_a_real_process(
    tmp_path, text, message
):
    home = init_home(tmp_path / "home")
    (tmp_path / "chat.json").write_text(text, encoding="utf-8")
    done = feral_process(home, "memory", "ingest", str(tmp_path / "chat.json"))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert_nothing_stored(home)


def test_a_turn_holding_a_secret_is_refused_or_left_out(tmp_path):
    home = init_home(tmp_path / "home")
    data = synthetic()[:1]
    data[0]["conversation"]["session_1"][1]["text"] = f"my token is {TOKEN}"
    (tmp_path / "chat.json").write_text(json.dumps(data), encoding="utf-8")
    result = feral(home, "memory", "ingest", str(tmp_path / "chat.json"))
    assert_one_line_error(result, "turn D1:2 of synth-1 session_1: refused")
    assert TOKEN not in result.output
    assert_nothing_stored(home)
    result = feral(home, "memory", "ingest", str(tmp_path / "chat.json"), "--secrets", "skip")
    assert result.exit_code == 0 and TOKEN not in result.output
    assert "skipped 1 turn(s)" in result.stderr and "D1:2" in result.stderr
    assert {turn[1] for turn in stored(home)} == {turn[1] for turn in said(data)} - {"D1:2"}
