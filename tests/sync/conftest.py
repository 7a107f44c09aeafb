"""Fixtures for the session tests: two simulated nodes, a laptop and a phone paired with it,
sharing one key registry (tests/sync/session_support.py)."""

from __future__ import annotations

import pytest

from .session_support import FakeKeys, SimNode


@pytest.fixture
def keys() -> FakeKeys:
    return FakeKeys()


@pytest.fixture
def laptop(keys: FakeKeys) -> SimNode:
    return SimNode("laptop", keys)


@pytest.fixture
def phone(keys: FakeKeys, laptop: SimNode) -> SimNode:
    node = SimNode("phone", keys)
    node.pair(laptop)
    return node
