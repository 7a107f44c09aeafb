"""What the absorb pipeline costs against the plain write, at N stored and embedded facts.

``python -m benchmarks absorb-cost [--json] [--facts N] [--writes N]``: ``remember`` through the
pipeline (:meth:`Node.absorb`) against the plain write (:meth:`Node.remember` of the parsed
triple) with N facts stored and embedded (default 10,000), median milliseconds of each over
``--writes`` fresh facts, interleaved one plain, one piped, in wall time and in CPU time (all
threads: the CPU figure is the one a busy machine does not inflate). ``_searchable`` adds the
embedding queue's drain that follows (as a CLI command drains at its end): the plain write's
row is embedded then; the pipeline's was embedded once, before its write, and that vector
stored with the row, so the drain finds nothing to do.

Two phases in the same run, each with its own plain figures measured beside it:

- ``scan_*``: each piped write starts with no vectors held, so the pipeline reads every stored
  vector to find a new fact's nearest neighbours, as a one-shot CLI command does;
- ``held_*``: the node holds the vectors in memory (storage/vectors/vector_index.py), as it does
  once it has read them (``feral serve``, ``feral mcp``, the resident): the neighbours come from one
  matrix product. ``index_load_cpu_ms`` is what the one load at the phase's start cost (not counted
  in the medians).

``ratio_write_cpu`` (what a caller waits for until the write returns) and
``ratio_searchable_cpu`` (until the fact is found by meaning too) are the pipeline's CPU
medians over the plain ones, per phase. Until the write returns, the pipeline has embedded the
text, which the plain write leaves to the queue; until searchable, both have done that work.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from feral.node.absorb.phrases import parse_fact
from feral.node.node import Node
from feral.storage.encoders.embedders import DEFAULT_EMBEDDER, load_embedder
from feral.storage.vectors.vector_index import VectorIndex

from .corpus import make_triples

__all__ = ["run_absorb"]

Timing = tuple[float, float, float, float]
"""Wall and CPU seconds of a write, and the same until its row is embedded too."""


async def _timed(work: Awaitable[Any], node: Node) -> Timing:
    wall, cpu = time.perf_counter(), time.process_time()
    await work
    done_wall, done_cpu = time.perf_counter() - wall, time.process_time() - cpu
    await node.embed_queued()
    return done_wall, done_cpu, time.perf_counter() - wall, time.process_time() - cpu


def _medians(runs: list[Timing]) -> list[float]:
    return [round(statistics.median(t[k] for t in runs) * 1000, 3) for k in range(4)]


async def _phase(node: Node, name: str, texts: list[str], cold: bool) -> dict[str, float]:
    """Plain and piped writes interleaved, two fresh texts per round; ``cold``: each piped write
    starts with no vectors held, as in a process of its own."""
    plain: list[Timing] = []
    piped: list[Timing] = []
    for i in range(0, len(texts) - 1, 2):
        plain.append(await _timed(node.remember(parse_fact(texts[i])), node))
        if cold:
            node.embedding.index = VectorIndex()
        piped.append(await _timed(node.absorb(text=texts[i + 1]), node))
    p_wall, p_cpu, p_swall, p_scpu = _medians(plain)
    a_wall, a_cpu, a_swall, a_scpu = _medians(piped)
    return {
        f"{name}_remember_p50_ms": p_wall,
        f"{name}_absorb_p50_ms": a_wall,
        f"{name}_remember_cpu_p50_ms": p_cpu,
        f"{name}_absorb_cpu_p50_ms": a_cpu,
        f"{name}_remember_searchable_cpu_p50_ms": p_scpu,
        f"{name}_absorb_searchable_cpu_p50_ms": a_scpu,
        f"{name}_remember_searchable_p50_ms": p_swall,
        f"{name}_absorb_searchable_p50_ms": a_swall,
        f"{name}_ratio_write_cpu": round(a_cpu / p_cpu, 3),
        f"{name}_ratio_searchable_cpu": round(a_scpu / p_scpu, 3),
    }


async def _cost(home: Path, facts: int, writes: int) -> dict[str, Any]:
    node = await Node.open(home, embedder=load_embedder(DEFAULT_EMBEDDER))
    try:
        await node.import_facts(make_triples(facts))
        await node.embed_queued()
        fresh = [" ".join(t) for t in make_triples(facts + 4 * writes)[facts:]]
        result: dict[str, Any] = {"facts": facts, "writes": writes}
        result |= await _phase(node, "scan", fresh[: 2 * writes], cold=True)
        node.embedding.index = index = VectorIndex()
        started = time.process_time()
        await node.store.read(index.refresh)
        result["index_load_cpu_ms"] = round((time.process_time() - started) * 1000, 3)
        result |= await _phase(node, "held", fresh[2 * writes :], cold=False)
        result["index_loads"] = index.loads
        return result
    finally:
        await node.close()


def run_absorb(facts: int = 10_000, writes: int = 100) -> dict[str, Any]:
    """The cost figures (see the module docstring), measured in a fresh home."""
    with tempfile.TemporaryDirectory() as folder:
        return asyncio.run(_cost(Path(folder), facts, writes))
