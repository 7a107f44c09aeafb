"""``python -m benchmarks absorb`` and ``absorb-pairs`` run end to end (shapes only, never a
timing: a figure from a tiny run on a busy machine means nothing)."""

from __future__ import annotations

import json
import math

from benchmarks.__main__ import main
from feral.node.classify import DUPLICATE_COSINE


def test_the_pairs_table_has_a_row_per_threshold_and_one_for_the_default(capsys):
    assert main(["absorb-pairs", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert [row["threshold"] for row in table] == [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.83,
                                                   0.85, 0.9, 0.95]  # fmt: skip
    assert DUPLICATE_COSINE == 0.83  # the README's table marks this row
    for row in table:
        assert 0 <= row["rule_precision"] <= 1 and 0 <= row["rule_recall"] <= 1


def test_a_tiny_cost_run_reports_positive_ratios(capsys):
    assert main(["absorb", "--facts", "20", "--writes", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["facts"], result["writes"]) == (20, 2)
    for phase in ("scan", "held"):
        for name in ("ratio_write_cpu", "ratio_searchable_cpu"):
            assert math.isfinite(result[f"{phase}_{name}"]) and result[f"{phase}_{name}"] > 0
    assert result["index_loads"] == 1  # the held phase's writes kept the copy current
