"""``feral log record|list|search`` as real processes on a real home, and ``stats`` counting it."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest

from .helpers import feral_process, turn_off_embeddings


def _stripe_key() -> str:
    """A made-up key in Stripe's published shape (not a real key), for the secret scan."""
    rng = random.Random(7)
    return "sk_live_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(24))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    turn_off_embeddings(tmp_path)
    return tmp_path


def run_json(home: Path, *args: str) -> object:
    done = feral_process(home, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_record_list_search_and_stats_through_the_real_cli(home: Path):
    first = run_json(
        home, "log", "record", "search", "--session", "s1",
        "--args", '{"q": "green tea"}', "--result", '{"hits": 2}', "--latency-ms", "12",
    )  # fmt: skip
    assert isinstance(first, dict)
    assert (first["tool"], first["session_id"], first["latency_ms"], first["success"]) == (
        "search", "s1", 12, True,
    )  # fmt: skip
    assert json.loads(first["args"]) == {"q": "green tea"}
    assert first["tier"] == "execution"
    failed = feral_process(
        home, "log", "record", "weather-forecast-for-a-city", "--session", "a-long-session-name",
        "--failed", "--args", '["Porto", "' + "x" * 60 + '"]', "--latency-ms", "86400000",
    )  # fmt: skip
    assert failed.returncode == 0, failed.stderr
    assert failed.stdout.startswith("Logged ")

    listed = run_json(home, "log", "list")
    assert isinstance(listed, list)
    assert [(r["tool"], r["success"], r["session_id"]) for r in listed] == [
        ("weather-forecast-for-a-city", False, "a-long-session-name"),
        ("search", True, "s1"),
    ]
    assert [r["tool"] for r in run_json(home, "log", "list", "--session", "s1")] == ["search"]
    assert [r["tool"] for r in run_json(home, "log", "list", "-n", "1")] == [
        "weather-forecast-for-a-city"
    ]

    assert [r["tool"] for r in run_json(home, "log", "search", "GREEN")] == ["search"]
    assert [r["tool"] for r in run_json(home, "log", "search", "porto")] == [
        "weather-forecast-for-a-city"
    ]
    default = run_json(home, "log", "record", "ping")
    assert isinstance(default, dict) and default["session_id"] == "default"
    assert run_json(home, "log", "search", "100%") == []  # % is a character, not a wildcard

    table = feral_process(home, "log", "list")
    assert table.returncode == 0 and "FAILED" in table.stdout and "when (UTC)" in table.stdout
    assert max(len(line) for line in table.stdout.splitlines()) <= 80
    stats = run_json(home, "memory", "stats")
    assert isinstance(stats, dict)
    assert stats["tiers"]["execution"]["live"] == 3


@pytest.mark.parametrize("option", ["--args", "--result"])
def test_bad_json_is_one_line_on_stderr_and_exit_1(home: Path, option: str):
    done = feral_process(home, "log", "record", "search", option, "{not json")
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and option in lines[0] and "not JSON" in lines[0], done.stderr
    assert done.stdout == ""
    listed = run_json(home, "log", "list")
    assert listed == []


def test_a_secret_in_the_arguments_is_refused_and_nothing_is_stored(home: Path):
    key = _stripe_key()
    done = feral_process(home, "log", "record", "pay", "--args", json.dumps({"key": key}))
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1 and key not in done.stderr
    assert run_json(home, "log", "list") == []
