"""The secret scan's benchmark (``python -m benchmarks.secret_bench``) runs and reports its shape.

Only the shape is checked, never a timing (see tests/test_benchmarks.py).
"""

from __future__ import annotations

import json
import math

from benchmarks.secret_bench import main, run_secret_bench


def test_a_tiny_run_reports_both_imports_their_ratio_and_the_scan_per_line() -> None:
    figures = run_secret_bench(lines=40, rounds=2)
    assert set(figures) == {
        "lines",
        "import_with_scan_s",
        "import_without_scan_s",
        "ratio",
        "scan_us_per_line",
    }
    assert all(math.isfinite(v) and v > 0 for v in figures.values()), figures


def test_the_command_prints_one_json_object(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["--lines", "20", "--rounds", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["lines"] == 20
