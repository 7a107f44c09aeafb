"""Fixtures for the storage tests: databases on real files in tmp_path, closed afterwards."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from feral.storage.db.connection import Connection
from feral.storage.store import open_sync
from feral.sync.types import NodeId

from .support import T0, Replica


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[Connection]:
    """A migrated database on a real file."""
    connection = open_sync(tmp_path / "feral.db")
    yield connection
    connection.close()


@pytest.fixture
def make_replica(tmp_path: Path) -> Iterator[Callable[..., Replica]]:
    """Open replicas on files in tmp_path (each with its own manual clock); close them after.

    They use ``synchronous=NORMAL``: durability across power loss is not under test here, and
    an fsync per commit would dominate the run (FULL itself is checked in test_connection).
    """
    opened: list[Replica] = []

    def make(name: str, node_id: NodeId, start: int = T0) -> Replica:
        replica = Replica.open(tmp_path, name, node_id, start, synchronous="NORMAL")
        opened.append(replica)
        return replica

    yield make
    for replica in opened:
        replica.close()
