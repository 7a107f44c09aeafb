"""The run starts with its longest tests (tests/longest_first.py), whatever was selected."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.longest_first import start_rank

ROOT = Path(__file__).resolve().parent.parent


def test_no_test_of_this_run_is_collected_before_a_longer_kind(
    request: pytest.FixtureRequest,
) -> None:
    ranks = [start_rank(item) for item in request.session.items]
    assert ranks == sorted(ranks)


def test_a_machine_named_last_is_collected_first() -> None:
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "--no-cov",
         "tests/test_longest_first.py", "simulations/test_repair.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert collected[0] == "simulations/test_repair.py::TestRepair::runTest"
    assert collected[1].startswith("tests/test_longest_first.py::")
