"""``python -m benchmarks import`` runs end to end (shapes only, never a timing), and its
lines hold the repeats it promises, which the pipeline merges."""

from __future__ import annotations

import json
import math

from benchmarks.__main__ import main
from benchmarks.import_cost import note_lines


def test_a_tiny_import_run_reports_a_ratio_per_size(capsys):
    assert main(["import", "--lines", "30", "60", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["lines"] for row in rows] == [30, 60]
    for row in rows:
        assert math.isfinite(row["ratio_cpu"]) and row["ratio_cpu"] > 0


def test_every_tenth_line_repeats_an_earlier_one_and_the_rest_differ():
    lines = note_lines(200)
    assert note_lines(200) == lines  # one seed, one text
    repeats = lines[9::10]
    assert all(line.startswith("really ") and line[7:] in lines for line in repeats)
    assert len({line for i, line in enumerate(lines) if i % 10 != 9}) == 180
