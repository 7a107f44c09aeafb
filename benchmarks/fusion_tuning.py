"""Choosing the hybrid's fusion: every variant tried on the same candidates, per set and split.

``python -m benchmarks fusion [--data PATH_OR_URL]``. Each set (the household set,
benchmarks/retrieval_set.py, without its graph queries, which follow the graph before any fusion;
and conversations, benchmarks/conversation_set.py) is stored in a fresh node; each query's two legs
are fetched once (:data:`~feral.storage.search.fusion.FUSION_POOL` candidates each,
storage/search/query.py), then :func:`~feral.storage.search.fusion.fuse` blends them with each
``alpha`` and power of the share of query words. Scores are recall@5, recall@10 and MRR@10 (the
household set's recall@5 counts at most five answers, as benchmarks/retrieval_bench.py does).
Queries and conversations alternate between ``tune`` (where a variant is chosen) and ``held`` (where
it is judged). What the hybrid does after the blend, the cue for questions that ask when and the
session neighbours (storage/search/fusion.py, storage/search/neighbours.py), is not varied here: the
conversation benchmark measures it whole (benchmarks/README.md).
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from feral.node.node import Node
from feral.storage.db.connection import Connection
from feral.storage.encoders.embedders import DEFAULT_EMBEDDER
from feral.storage.search import fusion
from feral.storage.search.query import Hit, cosines_of, search_fts, search_vector
from feral.storage.vectors.vectors import pack_vector

from .conversation_set import Conversation, split_of
from .retrieval_bench import open_node, store_memories
from .retrieval_set import load_memories, load_queries

__all__ = [
    "ALPHAS",
    "POWERS",
    "Legs",
    "collect_conversations",
    "collect_household",
    "render_tuning",
    "tune",
]

ALPHAS = (0.3, 0.4, 0.5, 0.6, 0.7)
POWERS = (0.0, 0.5, 1.0, 2.0)


@dataclass
class Legs:
    """One query's candidates from each leg, and what should be found."""

    query: str
    split: str
    relevant: tuple[str, ...]
    fts: list[Hit]
    vector: list[Hit]
    cap5: bool
    """Recall@5 out of at most five answers (the household set's rule)."""
    cosines: dict[str, float]
    """The cosine of each lexical candidate the vector leg did not return, as the hybrid uses."""


def _legs(
    conn: Connection, query: str, vector: bytes
) -> tuple[list[Hit], list[Hit], dict[str, float]]:
    pool = fusion.FUSION_POOL
    fts = search_fts(conn, query, pool, coverage=True)
    nearest = search_vector(conn, vector, pool)
    returned = {hit.id for hit in nearest}
    return fts, nearest, cosines_of(conn, vector, [h for h in fts if h.id not in returned])


async def _fetch(node: Node, queries: Sequence[tuple[str, str, tuple[str, ...]]]) -> list[Legs]:
    embedder = node.embedder
    assert embedder is not None
    fetched = []
    for text, split, relevant in queries:
        vector = pack_vector(embedder.embed([text])[0], embedder.dim)
        fts, nearest, cosines = await node.store.read(_legs, text, vector)
        fetched.append(Legs(text, split, relevant, fts, nearest, cap5=False, cosines=cosines))
    return fetched


async def _household(root: Path) -> list[Legs]:
    node = await open_node(root / "household", DEFAULT_EMBEDDER)
    try:
        names = await store_memories(node, load_memories())
        await node.embed_queued()
        rows = {memory: row for row, memory in names.items()}
        asked = [q for q in load_queries() if q.type != "graph"]
        queries = [
            (q.query, split_of(i), tuple(rows[m] for m in q.relevant if m in rows))
            for i, q in enumerate(asked)
        ]
        legs = await _fetch(node, queries)
    finally:
        await node.close()
    for leg in legs:
        leg.cap5 = True
    return legs


async def _conversation(root: Path, index: int, conversation: Conversation) -> list[Legs]:
    node = await open_node(root / f"conversation-{index}", DEFAULT_EMBEDDER)
    try:
        row_of: dict[str, str] = {}
        for turn in conversation.turns:
            row = await node.add_episode(conversation.sample_id, turn.memory)
            row_of[turn.dia_id] = str(row["id"])
        await node.embed_queued()
        queries = [
            (q.question, split_of(index), tuple(row_of[e] for e in q.evidence))
            for q in conversation.questions
        ]
        return await _fetch(node, queries)
    finally:
        await node.close()


def collect_household() -> list[Legs]:
    with tempfile.TemporaryDirectory(prefix="fusion-") as tmp:
        return asyncio.run(_household(Path(tmp)))


def collect_conversations(conversations: Sequence[Conversation]) -> list[Legs]:
    legs: list[Legs] = []
    with tempfile.TemporaryDirectory(prefix="fusion-") as tmp:
        for index, conversation in enumerate(conversations):
            legs += asyncio.run(_conversation(Path(tmp), index, conversation))
    return legs


def _measures(ranked: Sequence[str], leg: Legs) -> tuple[float, float, float]:
    """``(recall@5, recall@10, reciprocal rank within 10)``."""
    wanted = set(leg.relevant)
    if not wanted:
        return 0.0, 0.0, 0.0
    at5 = len(wanted & set(ranked[:5])) / (min(len(wanted), 5) if leg.cap5 else len(wanted))
    rank = next((i for i, hit in enumerate(ranked[:10], 1) if hit in wanted), None)
    return at5, len(wanted & set(ranked[:10])) / len(wanted), 1.0 / rank if rank else 0.0


def _ranked(leg: Legs, variant: tuple[str, float, float]) -> list[str]:
    kind, alpha, power = variant
    if kind == "fts":
        return [h.id for h in leg.fts]
    if kind == "vector":
        return [h.id for h in leg.vector]
    fts, nearest = copy.deepcopy(leg.fts), copy.deepcopy(leg.vector)
    pool = fusion.FUSION_POOL
    fused = fusion.fuse(
        leg.query, fts, nearest, alpha, 10, pool, coverage_power=power, cosines=leg.cosines
    )
    return [h.id for h in fused]


def tune(legs: Sequence[Legs]) -> dict[str, dict[str, tuple[float, ...]]]:
    """``{variant: {split: (recall@5, recall@10, MRR@10)}}`` for the splits ``tune``, ``held``."""
    variants = [("fts", 0.0, 0.0), ("vector", 0.0, 0.0)]
    variants += [("hybrid", a, p) for a, p in itertools.product(ALPHAS, POWERS)]
    table: dict[str, dict[str, tuple[float, ...]]] = {}
    for variant in variants:
        label = variant[0] if variant[0] != "hybrid" else f"alpha {variant[1]} power {variant[2]}"
        table[label] = {}
        for split in ("tune", "held"):
            scores = [_measures(_ranked(leg, variant), leg) for leg in legs if leg.split == split]
            count = len(scores) or 1
            table[label][split] = tuple(sum(s[i] for s in scores) / count for i in range(3))
    return table


def render_tuning(tables: dict[str, dict[str, dict[str, tuple[float, ...]]]]) -> str:
    """A Markdown table: one row per variant, ``R@5 / R@10 / MRR@10`` per set and split."""
    sets = list(tables)
    head = "| variant | " + " | ".join(f"{s} {p}" for s in sets for p in ("tune", "held")) + " |"
    lines = [head, "|" + "---|" * (2 * len(sets) + 1)]
    for label in tables[sets[0]]:
        cells = [
            "{:.3f} / {:.3f} / {:.3f}".format(*tables[s][label][p])
            for s in sets
            for p in ("tune", "held")
        ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
