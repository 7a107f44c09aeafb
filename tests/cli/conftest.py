"""One ``feral serve`` for both hostile ``/sync`` suites (test_hostile_frames.py, then
test_hostile_pages.py), and the slow peers that hang on it while those suites run.

The slow peers must wait out the server's no-progress timeout (30 s); started with the first
hostile case, they do so while every other case runs against the same server, which is also
what proves the server keeps serving others meanwhile. test_hostile_pages.py checks them, and
ends with the export comparison, so that runs after every case. Run alone,
test_hostile_frames.py still waits for the slow peers to finish before it stops the server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from .hostile_support import Target, serving_target
from .servers import Mesh
from .slow_peers import BULK_BYTES, BULK_FACTS, SlowPeers, run_slow_peers


@pytest.fixture
def mesh(tmp_path: Path) -> Iterator[Mesh]:
    """Devices in one temporary directory; every ``feral serve`` is stopped on the way out, and
    none may have logged a traceback."""
    with Mesh(tmp_path) as nodes:
        yield nodes
    for node in nodes.nodes:
        assert "Traceback" not in node.serve_log(), node.serve_log()


@pytest.fixture(scope="package")
def hostile_target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    root = tmp_path_factory.mktemp("hostile")
    with serving_target(root, bulk_facts=BULK_FACTS, bulk_bytes=BULK_BYTES, second=True) as target:
        yield target


@pytest.fixture(scope="package")
def hostile_tls_target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    """The same server over TLS (``feral serve --tls``), for the frame suite's ``wss`` runs."""
    root = tmp_path_factory.mktemp("hostile-tls")
    with serving_target(root, second=True, tls=True) as target:
        yield target


@pytest.fixture(scope="package")
def slow_peers(hostile_target: Target) -> Iterator[Future[SlowPeers]]:
    """The slow peers' outcome, computed in a thread of their own from the first use on."""
    with ThreadPoolExecutor(1) as pool:
        yield pool.submit(asyncio.run, run_slow_peers(hostile_target))
