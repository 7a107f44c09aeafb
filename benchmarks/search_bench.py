"""Hybrid search latency against the sum of its two legs, on a store of many episodes.

The store is built the way a node fills its own: each episode goes through
:func:`feral.storage.memory.memories.add_episode` (what :meth:`feral.node.node.Node.add_episode`
runs), in transactions of :data:`feral.node.node.IMPORT_BATCH`, and then
:meth:`feral.node.node.Node.reembed` embeds every row with the shipped model (the same queue drain
that runs after the writes of a CLI command and in the background of ``feral serve``). One episode
per transaction, as ``add_episode`` commits them, would only make the untimed build slower: the
search reads the same rows, index and vectors either way.

Every query then runs through :meth:`feral.node.node.Node.search` with the strategy ``fts``,
``vector`` and ``hybrid`` in turn, with the node's default settings: the code path of
``feral memory search --strategy ...`` without the process start. The three strategies take
turns in a rotating order, so a burst of load on the shared machine falls on all three alike.

``hybrid_vs_sum`` is the hybrid's median latency over the sum of the two legs' medians. A hybrid
search runs both legs and blends them, so a ratio near 1 means the blend adds next to nothing;
well above 1 means the hybrid does work neither leg does.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from feral.node.node import IMPORT_BATCH, Node
from feral.node.settings.bounds import Strategy
from feral.storage.db.connection import Connection
from feral.storage.memory.memories import Stamp, add_episode
from feral.sync.ids import new_ulid
from feral.sync.types import NodeId, RowId

from .corpus import SEED, make_episodes, make_queries

__all__ = ["QUERIES", "STRATEGIES", "run_search"]

QUERIES = 100
"""Timed queries per strategy (after :data:`WARMUP` untimed ones), drawn with a fixed seed."""
WARMUP = 10
STRATEGIES: tuple[Strategy, ...] = ("fts", "vector", "hybrid")
SESSION_EPISODES = 8
"""Episodes per session id: a long conversation compacts into several."""

Episode = tuple[RowId, str, str, tuple[str, ...]]
"""An episode before it is written: ``(id, session_id, summary, entities)``."""


def _add_episodes(
    conn: Connection, origin: NodeId, stamp: Stamp, episodes: Sequence[Episode], *, now_ms: int
) -> int:
    """Many ``add_episode`` calls in one write transaction; returns how many were written."""
    for row_id, session_id, summary, entities in episodes:
        add_episode(
            conn, origin, stamp, row_id,
            session_id=session_id, summary=summary, entities=entities, now_ms=now_ms,
        )  # fmt: skip
    return len(episodes)


def _rows(
    episodes: Sequence[tuple[str, tuple[str, ...]]], first: int, now_ms: int, rng: random.Random
) -> list[Episode]:
    """The rows for ``episodes`` (episode number ``first`` onwards), each under a new ULID."""
    return [
        (new_ulid(now_ms, rng.randbytes(10)), f"session-{(first + i) // SESSION_EPISODES}", *e)
        for i, e in enumerate(episodes)
    ]


async def _build(node: Node, count: int, seed: int) -> None:
    """Write ``count`` episodes and embed them all; raises if any row lacks its vector."""
    rng = random.Random(seed)
    episodes = make_episodes(count, seed)
    for start in range(0, count, IMPORT_BATCH):
        now = node.now_ms()
        batch = _rows(episodes[start : start + IMPORT_BATCH], start, now, rng)
        await node.store.write(_add_episodes, node.node_id, node.clock.tick, batch, now_ms=now)
    await node.reembed()
    stats = await node.stats()
    live, vectors = stats["tiers"]["episodic"]["live"], stats["vectors"]
    if live != count or vectors != count:
        raise RuntimeError(f"built {live} episodes with {vectors} vectors, expected {count}")


async def _one(node: Node, query: str, strategy: Strategy) -> float:
    """Seconds for one search; a search that fell back to another strategy is an error, since
    its time would be measured under the wrong name."""
    started = time.perf_counter()
    result = await node.search(query, strategy=strategy)
    elapsed = time.perf_counter() - started
    if result.strategy != strategy or result.notes:
        raise RuntimeError(f"{strategy} search ran as {result.strategy}: {result.notes}")
    return elapsed


async def _measure(node: Node, queries: Sequence[str]) -> dict[str, list[float]]:
    """Each query through every strategy, starting with a different one each time."""
    for query in queries[:WARMUP]:  # page cache, tokenizer and statement cache
        for strategy in STRATEGIES:
            await _one(node, query, strategy)
    times: dict[str, list[float]] = {s: [] for s in STRATEGIES}
    for i, query in enumerate(queries[WARMUP:]):
        shift = i % len(STRATEGIES)
        for strategy in STRATEGIES[shift:] + STRATEGIES[:shift]:
            times[strategy].append(await _one(node, query, strategy))
    return times


async def _search_times(
    episodes: int, queries: int, seed: int
) -> tuple[dict[str, list[float]], float]:
    """Seconds of each query per strategy, and the seconds the build took."""
    with tempfile.TemporaryDirectory(prefix="feral-search-") as tmp:
        node = await Node.open(Path(tmp) / "home")
        try:
            started = time.perf_counter()
            await _build(node, episodes, seed)
            built = time.perf_counter() - started
            times = await _measure(node, make_queries(WARMUP + queries, seed))
        finally:
            await node.close()
    return times, built


def _p95(times: Sequence[float]) -> float:
    """The 95th percentile: a slow tail the median hides (the nearest rank, no interpolation)."""
    ranked = sorted(times)
    return ranked[max(0, -(-95 * len(ranked) // 100) - 1)]


def run_search(episodes: int, queries: int = QUERIES, seed: int = SEED) -> dict[str, float]:
    """Build a store of ``episodes`` episodes, time ``queries`` queries through each strategy.

    Returns ``hybrid_vs_sum`` and, beside it, each strategy's median and 95th percentile in
    milliseconds, the sizes and the build time.
    """
    times, built = asyncio.run(_search_times(episodes, queries, seed))
    p50 = {s: statistics.median(t) for s, t in times.items()}
    return {
        "hybrid_vs_sum": p50["hybrid"] / (p50["fts"] + p50["vector"]),
        "search_episodes": episodes,
        "search_queries": queries,
        "search_fts_p50_ms": p50["fts"] * 1000,
        "search_vector_p50_ms": p50["vector"] * 1000,
        "search_hybrid_p50_ms": p50["hybrid"] * 1000,
        **{f"search_{s}_p95_ms": _p95(t) * 1000 for s, t in times.items()},
        "search_build_s": built,
    }
