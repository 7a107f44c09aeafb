"""``python -m benchmarks cli`` runs end to end (shapes only, never a timing: a figure from a
tiny run on a busy machine means nothing)."""

from __future__ import annotations

import json
import math

import pytest

from benchmarks.__main__ import main
from benchmarks.cli_bench import GOALS_MS, render_cli


@pytest.mark.slow
def test_a_tiny_run_times_each_command_and_the_floor(capsys):
    assert main(["cli", "--facts", "20", "--runs", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["facts"], result["runs"]) == (20, 1)
    assert set(result["times"]) == {
        "floor", "help", "remember", "search", "remember_alone", "search_alone",
        "remember_served", "search_served",
    }  # fmt: skip
    assert result["resident_ready_s"] > 0
    for name, figures in result["times"].items():
        assert figures["goal_ms"] == GOALS_MS.get(name), name
        for key in ("wall_ms", "cpu_ms"):
            assert math.isfinite(figures[key]) and figures[key] > 0, (name, key)
    lines = render_cli(result).splitlines()
    assert [line.split("  ")[0] for line in lines[2:]] == [
        "feral --help",
        "feral memory remember",
        "feral memory search",
        "remember, no resident",
        "search, no resident",
        "remember, serve running",
        "search, serve running",
    ]
