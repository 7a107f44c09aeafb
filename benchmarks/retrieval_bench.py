"""Retrieval quality on the household set (benchmarks/retrieval_set.py), through ``Node.search``.

For each embedder feral knows, a fresh home is made with ``memory.embedder`` set to it, and the
set is stored the way a person stores it: facts through :meth:`~feral.node.node.Node.absorb`
(``feral memory remember TEXT``), episodes through :meth:`~feral.node.node.Node.add_episode`,
in a real SQLite file. Every query then runs through :meth:`~feral.node.node.Node.search` with
each strategy (``fts``, ``vector``, ``hybrid`` with the settings' defaults, and ``hybrid`` with
the MMR rerank), the code path of ``feral memory search`` without the process start.

Scores, per query type and overall (every query counts once):

* ``recall@5``: the share of a query's relevant memories in its first five results (out of at
  most five, so a query with seven answers is not held to an impossible 1.0);
* ``MRR@10``: one over the rank of the first relevant result within ten, else 0.
"""

from __future__ import annotations

import asyncio
import dataclasses
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from feral.node.home.identity import load_or_create_identity
from feral.node.node import Node
from feral.node.settings.config import load_settings, save_settings
from feral.node.settings.limits import Strategy
from feral.storage.encoders.embedders import EMBEDDER_CHOICES, NO_EMBEDDER

from .retrieval_set import QUERY_TYPES, Memory, Query, load_memories, load_queries

__all__ = [
    "CONFIGS",
    "RECALL_AT",
    "RR_AT",
    "Config",
    "Run",
    "open_node",
    "render_retrieval",
    "run_retrieval",
    "score_ranking",
]

RECALL_AT = 5
RR_AT = 10
SESSION = "household"


@dataclass(frozen=True)
class Config:
    """One way of searching: a strategy, with or without the MMR rerank."""

    label: str
    strategy: Strategy
    mmr: bool = False


CONFIGS = (
    Config("fts", "fts"),
    Config("vector", "vector"),
    Config("hybrid", "hybrid"),
    Config("hybrid+mmr", "hybrid", mmr=True),
)


@dataclass(frozen=True)
class Run:
    """The scores of one embedder and one :class:`Config`: ``{type: (recall@5, MRR@10)}``,
    with ``"overall"`` among the types."""

    embedder: str
    config: str
    scores: dict[str, tuple[float, float]]


def score_ranking(ranked: Sequence[str], relevant: Sequence[str]) -> tuple[float, float]:
    """``(recall@5, reciprocal rank within 10)`` of one ranked list of ids."""
    wanted = set(relevant)
    found = len(wanted & set(ranked[:RECALL_AT]))
    recall = found / min(len(wanted), RECALL_AT)
    rank = next((i for i, hit in enumerate(ranked[:RR_AT], 1) if hit in wanted), None)
    return recall, (1.0 / rank if rank else 0.0)


def _mean(values: Sequence[tuple[float, float]]) -> tuple[float, float]:
    count = len(values) or 1
    return sum(v[0] for v in values) / count, sum(v[1] for v in values) / count


async def open_node(home: Path, embedder: str) -> Node:
    """A fresh node whose settings name ``embedder`` (the node loads it, as in use)."""
    load_or_create_identity(home)
    settings = load_settings(home)
    save_settings(home, dataclasses.replace(
        settings, memory=dataclasses.replace(settings.memory, embedder=embedder)
    ))  # fmt: skip
    return await Node.open(home)


async def store_memories(node: Node, memories: Sequence[Memory]) -> dict[str, str]:
    """Store every memory as a person would; returns the row id of each memory id."""
    rows: dict[str, str] = {}
    for memory in memories:
        if memory.tier == "fact":
            row: dict[str, Any] = dict((await node.absorb(memory.text)).row)
        else:
            row = dict(await node.add_episode(SESSION, memory.text))
        rows[str(row["id"])] = memory.id
    return rows


async def _score(
    node: Node, names: dict[str, str], queries: Sequence[Query], config: Config
) -> dict[str, tuple[float, float]]:
    by_type: dict[str, list[tuple[float, float]]] = {t: [] for t in QUERY_TYPES}
    for query in queries:
        result = await node.search(
            query.query, top_k=RR_AT, strategy=config.strategy, mmr=config.mmr
        )
        ranked = [names.get(hit["id"], hit["id"]) for hit in result.results]
        by_type[query.type].append(score_ranking(ranked, query.relevant))
    scores = {t: _mean(v) for t, v in by_type.items()}
    scores["overall"] = _mean([s for v in by_type.values() for s in v])
    return scores


async def _embedder_runs(
    embedder: str, configs: Sequence[Config], root: Path, note: Callable[[str], None]
) -> list[Run]:
    node = await open_node(root / embedder, embedder)
    try:
        names = await store_memories(node, load_memories())
        await node.embed_queued()  # embedding runs off the write path: score the settled store
        queries = load_queries()
        runs = []
        for config in configs:
            if node.embedder is None and config.strategy != "fts":
                continue  # no model, no vector leg: hybrid is fts (node/recall/search.py)
            note(f"{embedder}: {config.label}")
            runs.append(Run(embedder, config.label, await _score(node, names, queries, config)))
        return runs
    finally:
        await node.close()


def run_retrieval(
    embedders: Sequence[str] | None = None,
    progress: Callable[[str], None] = lambda _: None,
    configs: Sequence[Config] = CONFIGS,
) -> list[Run]:
    """Every embedder (default: all feral knows, ``"none"`` last) through every config."""
    chosen = list(embedders) if embedders else [
        *(e for e in EMBEDDER_CHOICES if e != NO_EMBEDDER), NO_EMBEDDER
    ]  # fmt: skip
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="retrieval-") as tmp:
        for embedder in chosen:
            runs += asyncio.run(_embedder_runs(embedder, configs, Path(tmp), progress))
    return runs


def render_retrieval(runs: Sequence[Run]) -> str:
    """A Markdown table: one row per embedder and config, ``R@5 / MRR@10`` per query type."""
    columns = [*QUERY_TYPES, "overall"]
    head = "| embedder | strategy | " + " | ".join(columns) + " |"
    lines = [head, "|" + "---|" * (len(columns) + 2)]
    for run in runs:
        cells = [f"{run.scores[c][0]:.2f} / {run.scores[c][1]:.2f}" for c in columns]
        lines.append(f"| {run.embedder} | {run.config} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
