"""What classifying a bulk import costs, against writing the same lines as given, in one run.

``python -m benchmarks import [--json] [--lines N ...]``: for each N (default 1,000, 5,000 and
20,000), N generated note lines go into a fresh home twice: through the absorb pipeline
(:meth:`Node.import_facts`, as ``feral memory import`` writes new lines) and written as given
(``classify=False``, as an export's facts are), wall and CPU seconds of each and their ratio.
The embedding that follows either (the same work for both) is not counted.

The lines are varied: words drawn from a vocabulary of 6,000 (a few common, most rare, as in
notes people write), 6 to 14 of them, a number in some; every tenth line repeats an earlier one
with a filler word added (a near-duplicate the pipeline merges). The same seed gives the same
lines, so two runs measure the same work.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from feral.node.node import Node

__all__ = ["note_lines", "run_import"]

SIZES = (1_000, 5_000, 20_000)
SEED = 2_015
_SYLLABLES = "ka lo mi ne ru sa ti vo pe da fi gu ho ja ze bo ri".split()


def _vocabulary(rng: random.Random, size: int = 6_000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def note_lines(count: int, seed: int = SEED) -> list[str]:
    """``count`` note lines (module docstring), the same for one seed."""
    rng = random.Random(seed)
    vocabulary = _vocabulary(rng)
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]  # Zipf: a few words everywhere
    lines: list[str] = []
    for number in range(count):
        if number % 10 == 9:
            lines.append("really " + rng.choice(lines))
            continue
        words = rng.choices(vocabulary, weights, k=rng.randint(6, 14))
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), str(rng.randint(1, 9_999)))
        lines.append(" ".join(words))
    return lines


async def _timed_import(home: Path, lines: list[str], classify: bool) -> tuple[float, float]:
    node = await Node.open(home)
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        await node.import_facts([("user", "note", line) for line in lines], classify=classify)
        return time.perf_counter() - wall, time.process_time() - cpu
    finally:
        await node.close()


def _measure(count: int) -> dict[str, Any]:
    lines = note_lines(count)
    with tempfile.TemporaryDirectory() as plain, tempfile.TemporaryDirectory() as piped:
        given_wall, given_cpu = asyncio.run(_timed_import(Path(plain), lines, False))
        wall, cpu = asyncio.run(_timed_import(Path(piped), lines, True))
    return {
        "lines": count,
        "classified_wall_s": round(wall, 2),
        "classified_cpu_s": round(cpu, 2),
        "as_given_wall_s": round(given_wall, 2),
        "as_given_cpu_s": round(given_cpu, 2),
        "ratio_cpu": round(cpu / given_cpu, 2),
    }


def run_import(sizes: tuple[int, ...] = SIZES) -> list[dict[str, Any]]:
    """One row per size (module docstring), each into fresh homes."""
    return [_measure(count) for count in sizes]


def render_import(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table."""
    head = "| lines | classified wall | classified CPU | as given wall | as given CPU | CPU ratio |"
    body = [
        f"| {r['lines']:,} | {r['classified_wall_s']} s | {r['classified_cpu_s']} s | "
        f"{r['as_given_wall_s']} s | {r['as_given_cpu_s']} s | {r['ratio_cpu']}× |"
        for r in rows
    ]
    return "\n".join([head, "|---|---|---|---|---|---|", *body])
