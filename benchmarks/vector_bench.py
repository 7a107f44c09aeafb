"""The vector leg against a numpy scan of the same vectors, and how soon a catch-up is
searchable by meaning.

**Vector leg.** A store of N episodes is built as search_bench.py builds its own and embedded with
the node's default model (a faster encoder only changes the build time, not the scan). Each query
vector then goes through :func:`feral.storage.search.query.search_vector` as a node that has
searched before runs it (the vectors held in memory: storage/vectors/vector_index.py) and as a
node's first search runs it (every stored float32 BLOB read for the query: what a one-shot CLI
command pays), and through the baseline: a numpy product of the same vectors held as one float32
matrix, with the same number of candidates picked by ``argpartition``. The leg also reads the
candidate rows and builds its hits, which the baseline does not; all three run on the database
thread, in a rotating order, so a burst of load falls on all alike. ``vector_leg_vs_numpy`` is the
held leg's median over the baseline's; ``cold_read_vs_numpy`` the same for the first search.

**Searchable after a catch-up.** Node A holds N facts; node B, empty, runs ``feral serve`` with
the default embedder and embeds in the background while the pages arrive. ``feral sync now`` on
A is the catch-up; from the moment it returns (every row committed on B, found by full text) the
clock runs until B's embedding queue is empty (every row searchable by meaning). The figure is
the static model's; the sentence encoder's throughput is measured on its own.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import sqlean

from feral.node.node import Node
from feral.node.settings.config import (
    PeerSettings,
    SearchSettings,
    load_settings,
    save_settings,
    with_peer,
)
from feral.storage.db.connection import Connection
from feral.storage.search.query import search_vector
from feral.storage.vectors.vector_index import VectorIndex, read_vectors
from feral.storage.vectors.vectors import embedder_in_use, pack_vector
from feral.sync.schema import EPISODES
from feral.sync.types import NodeId

from .catchup_bench import _feral, _free_port, _serve, _without_embeddings
from .corpus import SEED, make_queries, make_triples
from .search_bench import QUERIES, WARMUP, _build

__all__ = ["run_searchable_after_catchup", "run_vector_leg"]

POLL_S = 0.02
Floats = npt.NDArray[np.float32]
Timed = Callable[[bytes], object]


def _matrix(conn: Connection) -> Floats:
    """Every episode vector as the rows of one float32 matrix: the baseline's copy."""
    in_use = embedder_in_use(conn)
    assert in_use is not None
    return read_vectors(conn, EPISODES, in_use[1])[1].copy()


def _numpy_scan(matrix: Floats, k: int) -> Timed:
    """The baseline: the product on this thread (einsum). ``@`` hands a matrix-vector product
    to BLAS's thread pool, whose start-up on a busy two-core machine cost many times the product
    itself (in one run at 6k rows: 17 ms for that baseline, 1 ms for the whole held leg), a
    baseline too slow to say anything."""
    k = min(k, len(matrix))

    def scan(query: bytes) -> object:
        scores = np.einsum("ij,j->i", matrix, np.frombuffer(query, dtype="<f4"))
        top = np.argpartition(-scores, k - 1)[:k]
        return top[np.argsort(-scores[top])]

    return scan


def _time_all(legs: dict[str, Timed], queries: Sequence[bytes]) -> dict[str, float]:
    """On the database thread: each query through every leg, the order rotating; medians."""
    for query in queries[:WARMUP]:
        for leg in legs.values():
            leg(query)
    names = list(legs)
    times: dict[str, list[float]] = {n: [] for n in names}
    for i, query in enumerate(queries[WARMUP:]):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            started = time.perf_counter()
            legs[name](query)
            times[name].append(time.perf_counter() - started)
    return {n: statistics.median(t) for n, t in times.items()}


def _legs(conn: Connection, matrix: Floats, index: VectorIndex) -> dict[str, Timed]:
    k = SearchSettings.top_k
    return {
        "numpy": _numpy_scan(matrix, 2 * k),  # the leg takes 2k candidates from each table
        "held": lambda q: search_vector(conn, q, k, index),
        "cold": lambda q: search_vector(conn, q, k),
    }


async def _leg_times(episodes: int, queries: int, seed: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="feral-vectors-") as tmp:
        node = await Node.open(Path(tmp) / "home")
        try:
            embedder = node.embedder
            assert embedder is not None
            await _build(node, episodes, seed)
            texts = make_queries(WARMUP + queries, seed)
            vectors = [pack_vector(v, embedder.dim) for v in embedder.embed(texts)]
            matrix = await node.store.read(_matrix)
            index = VectorIndex()
            started = time.perf_counter()
            await node.store.read(search_vector, vectors[0], 1, index)  # the one load
            loaded = time.perf_counter() - started
            p50 = await node.store.read(lambda conn: _time_all(_legs(conn, matrix, index), vectors))
        finally:
            await node.close()
    return {**p50, "load": loaded, "dim": float(matrix.shape[1])}


def run_vector_leg(episodes: int, queries: int = QUERIES, seed: int = SEED) -> dict[str, float]:
    """The vector leg's medians against the numpy baseline at ``episodes`` episodes."""
    p50 = asyncio.run(_leg_times(episodes, queries, seed))
    return {
        "vector_leg_vs_numpy": p50["held"] / p50["numpy"],
        "cold_read_vs_numpy": p50["cold"] / p50["numpy"],
        "vector_leg_held_p50_ms": p50["held"] * 1000,
        "vector_leg_cold_p50_ms": p50["cold"] * 1000,
        "vector_leg_numpy_p50_ms": p50["numpy"] * 1000,
        "vector_index_load_s": p50["load"],
        "vector_index_mb": episodes * p50["dim"] * 4 / 1e6,
    }


# -- searchable after a catch-up -----------------------------------------------------------------


async def _seed(home_a: Path, home_b: Path, rows: int) -> tuple[str, str]:
    """A holds ``rows`` facts (no vectors: they never travel); B is empty, with the default
    embedder. Returns their node ids."""
    for home in (home_a, home_b):
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
    _without_embeddings(home_a)
    node_a, node_b = await Node.open(home_a), await Node.open(home_b)
    await node_a.import_facts(make_triples(rows))
    ids = node_a.node_id, node_b.node_id
    await node_a.close()
    await node_b.close()
    return ids


def _pair(home_a: Path, home_b: Path, ids: tuple[str, str], port: int) -> None:
    """A dials B on ``port``; B accepts A."""
    dial = PeerSettings(NodeId(ids[1]), f"ws://127.0.0.1:{port}")
    save_settings(home_a, with_peer(load_settings(home_a), dial))
    save_settings(home_b, with_peer(load_settings(home_b), PeerSettings(NodeId(ids[0]), None)))


def _queue(db: Path) -> int:
    conn = sqlean.connect(str(db), timeout=10)
    try:
        return int(conn.execute("SELECT count(*) FROM embed_queue").fetchone()[0])
    finally:
        conn.close()


def run_searchable_after_catchup(rows: int) -> dict[str, float]:
    """Seconds from the end of a ``rows``-fact catch-up until B has embedded every row."""
    with tempfile.TemporaryDirectory(prefix="feral-searchable-") as tmp:
        root = Path(tmp)
        port = _free_port()
        _pair(root / "a", root / "b", asyncio.run(_seed(root / "a", root / "b", rows)), port)
        server = _serve(root / "b", port)
        try:
            started = time.perf_counter()
            done = subprocess.run(
                [*_feral(), "--home", str(root / "a"), "sync", "now"],
                capture_output=True, text=True, env=os.environ.copy(),
            )  # fmt: skip
            caught_up = time.perf_counter()
            if done.returncode != 0:
                raise RuntimeError(f"sync now failed: {done.stderr.strip()}")
            waiting = _queue(root / "b" / "feral.db")
            while _queue(root / "b" / "feral.db"):
                time.sleep(POLL_S)
            searchable = time.perf_counter()
        finally:
            server.terminate()
            server.wait(10)
    return {
        "embed_catchup_s": caught_up - started,
        "embed_waiting_at_catchup_end": float(waiting),
        "searchable_after_catchup_s": searchable - caught_up,
    }
