"""The absorb pipeline in bulk: ``feral memory import`` and the facts ``ingest`` extracts.

Each fact is classified and written as :func:`~feral.node.absorb.absorb` would (a duplicate
writes nothing, a new value of a single-valued slot supersedes the old one behind an edge, an
opposite is linked as a contradiction, near facts as related), in order, so a line is compared
with the lines before it as well as with what was stored. What differs is only the cost:

- the texts of :data:`CHUNK` facts are embedded in one call, outside any transaction, and the
  chunk is written in one transaction (each fact's vector stored with its row, never made
  twice);
- a bulk of :data:`HOLD_FROM` facts or more holds the vectors in memory for its duration
  (storage/vector_index.py, kept in step with every vector the chunk writes), so each fact's
  neighbours cost one matrix product instead of sqlite-vec's scan of every stored vector;
- the rules decide, never the LLM classifier (one request per line of a large file would make
  an import as slow as the endpoint; ``remember`` is where that choice applies).

The secret scan runs before any of this (the callers refuse or skip lines holding secrets).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING

from feral.storage.absorb_store import Outcome, absorb_fact
from feral.storage.connection import Connection
from feral.storage.memories import Stamp
from feral.storage.memory_model import add_edge
from feral.sync.types import NodeId

from .absorb import Fact, embed_facts, held_vectors
from .classify import decide, fact_text
from .phrases import Triple

if TYPE_CHECKING:
    from .node import Node

__all__ = ["CHUNK", "HOLD_FROM", "Absorbed", "absorb_many", "absorb_groups"]

CHUNK = 64
"""Facts embedded per model call and written per transaction (the embedding queue's batch)."""
HOLD_FROM = 32
"""From this many facts a bulk holds the vectors in memory: one load of every vector costs
about as much as a dozen of sqlite-vec's scans at 10k stored facts."""


@dataclass
class Absorbed:
    """What a bulk did: how many facts were written, and each classification's count."""

    written: int = 0
    classifications: Counter[str] = field(default_factory=Counter)
    ids: list[str] = field(default_factory=list)
    """The row holding each fact, in order (a duplicate's is the stored row's)."""

    def add(self, outcomes: Sequence[Outcome]) -> None:
        for outcome in outcomes:
            kind = outcome.decision.classification
            self.classifications[kind] += 1
            self.written += kind != "duplicate"
            self.ids.append(str(outcome.row["id"]))


async def absorb_many(
    node: Node,
    triples: Sequence[Triple],
    *,
    source_episode: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> Absorbed:
    """Classify and write ``triples`` in order (already validated and scanned by the caller);
    ``progress`` gets each chunk's size once it is written."""
    result = Absorbed()
    held_before = node.embedding.index
    if held_before is None and len(triples) >= HOLD_FROM and node.embedding.active:
        node.embedding.hold_vectors()
    try:
        for start in range(0, len(triples), CHUNK):
            chunk = [tuple(p.strip() for p in t) for t in triples[start : start + CHUNK]]
            facts = await _facts(node, [(t[0], t[1], t[2]) for t in chunk], source_episode)
            result.add(await node._write(_absorb_chunk, facts, now_ms=node.now_ms()))
            await node._committed()
            if progress:
                progress(len(chunk))
    finally:
        node.embedding.index = held_before
    return result


async def _facts(node: Node, triples: list[Triple], source_episode: str | None) -> list[Fact]:
    vectors = await embed_facts(node, [fact_text(*t) for t in triples])
    held = await held_vectors(node, vectors)
    return [Fact(t, v, held, source_episode) for t, v in zip(triples, vectors, strict=True)]


def _absorb_chunk(
    conn: Connection, origin: NodeId, stamp: Stamp, facts: Sequence[Fact], *, now_ms: int
) -> list[Outcome]:
    """Each fact read, decided and written in turn, in the caller's one transaction."""
    return [
        absorb_fact(
            conn,
            origin,
            stamp,
            fact.candidates_of,
            decide,
            lambda memory_id, fact=fact: fact.meta(memory_id, now_ms),  # type: ignore[misc]
            now_ms=now_ms,
            vector=fact.vector,
            source_episode=fact.source_episode,
        )
        for fact in facts
    ]


async def absorb_groups(node: Node, episode_id: str, groups: Sequence[Sequence[Triple]]) -> int:
    """The facts of an episode's messages (one group per message), through the pipeline, with
    the episode as their ``source_episode``; the rows holding one message's facts are linked
    pairwise by ``co_extracted`` edges (a duplicate's stored row included). Returns how many
    facts the groups hold (repeats included)."""
    flat = [triple for group in groups for triple in group]
    absorbed = await absorb_many(node, flat, source_episode=episode_id)
    pairs: list[tuple[str, str]] = []
    at = 0
    for group in groups:
        ids = sorted(set(absorbed.ids[at : at + len(group)]))
        at += len(group)
        pairs += combinations(ids, 2)
    if pairs:
        await node.commit(_link_pairs, pairs, now_ms=node.now_ms())
    return len(flat)


def _link_pairs(
    conn: Connection, origin: NodeId, stamp: Stamp, pairs: list[tuple[str, str]], *, now_ms: int
) -> None:
    for first, second in pairs:
        add_edge(conn, origin, stamp, "co_extracted", first, second, now_ms=now_ms)
