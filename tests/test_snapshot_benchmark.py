"""The snapshot benchmark (benchmarks/snapshot_bench.py) runs end to end: both stores end with
the source's export. Only the shape is checked, never a timing."""

from __future__ import annotations

import json
import math

from benchmarks.snapshot_bench import main, run_snapshot


def test_a_tiny_run_ends_with_the_same_export_both_ways() -> None:
    result = run_snapshot(rows=60, edits=2)
    assert result["same_export"] is True
    assert result["log_entries"] == 180
    ratio = result["snapshot_vs_replay"]
    assert isinstance(ratio, float) and math.isfinite(ratio) and ratio > 0


def test_the_command_prints_one_json_object(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["--rows", "20", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == 20
