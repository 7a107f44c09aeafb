"""The longest tests start first, so the run does not end with one core busy and one idle.

A pytest plugin (``-p tests.longest_first`` in pyproject.toml). Collected in path order, the
simulations' state machines (minutes each) came last: whichever worker drew one ran it alone
while the other had nothing left. Here the machines go first (each a unittest ``TestCase``
hypothesis builds), then the simulations' other slow tests (the bites), then the other ``slow``
tests (process meshes, big hypothesis runs), then the rest, each group in its collected order,
which keeps a module's tests together. xdist's ``worksteal`` mode (``--dist worksteal`` in
pyproject.toml) then lets an idle worker take half of a busy one's queue, so the long tests up
front are shared out rather than all handed to the first worker.
"""

from __future__ import annotations

import unittest
from pathlib import Path

import pytest

MACHINES = Path(__file__).resolve().parent.parent / "simulations"
"""The folder of the state machines: the longest tests of the suite."""


def start_rank(item: pytest.Item) -> int:
    """0 for a state machine, 1 for another slow simulation, 2 for another slow test, 3 for the
    rest."""
    if item.get_closest_marker("slow") is None:
        return 3
    if MACHINES not in item.path.parents:
        return 2
    owner = getattr(item, "cls", None)  # a pytest.Function's class, if it has one
    machine = isinstance(owner, type) and issubclass(owner, unittest.TestCase)
    return 0 if machine else 1


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Reorder in place (a stable sort: within a rank, the collected order)."""
    items.sort(key=start_rank)
