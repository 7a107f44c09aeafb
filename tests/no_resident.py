"""No resident node outlives a test that did not ask for one: ``FERAL_RESIDENT_IDLE_S=0``.

A pytest plugin (``-p tests.no_resident`` in pyproject.toml), so it applies before any test
runs, in this process and in every process a test starts. Hundreds of tests run ``feral memory
remember`` or ``search`` as processes on homes they leave behind; with the default, each home
would keep a resident (cli/resident.py) for ten minutes after its test. The resident's own
tests (tests/cli/test_resident.py) give their nodes an idle time of their own, run the default
from the settings too, and stop every resident they start.
"""

from __future__ import annotations

import os

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Set at configure, not on import: importing ``feral`` here would run before coverage
    starts (tests/coverage_floor.py), and its modules' top lines would count as never run.
    xdist starts its workers later, with this environment."""
    from feral.node.home.resident_runtime import IDLE_ENV

    os.environ[IDLE_ENV] = "0"
