"""The benchmark harness (``python -m benchmarks``) runs end to end and reports the agreed shape.

Only the shape is checked, never a timing: figures from a tiny run on a busy machine mean
nothing, and a test that failed on them would fail for the machine's sake.
"""

from __future__ import annotations

import json
import math

import pytest

from benchmarks.__main__ import main
from benchmarks.report import GOALS, OTHER_RATIOS, Report, render_table

AGREED = (
    "write_overhead",
    "merge_vs_plain",
    "stale_vs_fresh",
    "wire_bytes_ratio",
    "incremental_large_vs_small",
    "catchup_vs_merge",
    "hybrid_vs_sum",
    "vector_leg_vs_numpy",
    "tls_vs_plain_catchup",
    "tls_wire_bytes_ratio",
)
GOAL_RATIOS = set(AGREED)


def test_the_goals_are_the_agreed_ratios_in_order():
    assert tuple(g.ratio for g in GOALS) == AGREED


@pytest.mark.slow
def test_a_tiny_run_reports_exactly_the_goal_ratios_as_positive_numbers(capsys):
    assert main(["--rows", "20", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["ratios"]) == GOAL_RATIOS
    assert set(report["other_ratios"]) == set(OTHER_RATIOS)
    for name, value in {**report["ratios"], **report["other_ratios"]}.items():
        assert isinstance(value, float) and math.isfinite(value) and value > 0, name
    assert report["sizes"]["episodes"] == report["absolute"]["search_episodes"] == 20
    assert not set(report["absolute"]) & (GOAL_RATIOS | set(OTHER_RATIOS))


def sample_report(hybrid_vs_sum: float) -> Report:
    ratios = {g.ratio: g.target for g in GOALS}
    ratios["hybrid_vs_sum"] = hybrid_vs_sum
    return Report(
        machine={"python": "3", "sqlite": "3", "cpu_count": 2, "platform": "test"},
        sizes={"rows": 10, "incremental_small": 10, "incremental_large": 100, "episodes": 10,
               "queries": 5},
        ratios=ratios,
        other_ratios={name: 1.0 for name in OTHER_RATIOS},
        absolute={"search_hybrid_p50_ms": 12.5},
    )  # fmt: skip


def test_the_table_gives_each_goal_a_verdict_and_keeps_the_other_figures_below():
    lines = render_table(sample_report(hybrid_vs_sum=2.0)).splitlines()
    rows = {line.split()[0]: line for line in lines if line}
    for name in AGREED:  # every other ratio sits exactly on its target, which meets it
        verdict = "NOT MET" if name == "hybrid_vs_sum" else "  met"
        assert rows[name].endswith(verdict), rows[name]
    assert "9 of 10 goals met" in lines
    names = list(rows)
    assert names.index("write_overhead_single_row") > names.index("hybrid_vs_sum")
    assert names.index("search_hybrid_p50_ms") > names.index("page_bytes_ratio")
