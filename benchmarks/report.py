"""One benchmark run: every measurement in turn, sorted into goals, other ratios and absolutes.

Each module measures and returns its figures by name; this one decides what a reader sees.
``ratios`` holds exactly the ratios with a goal (:data:`GOALS`, in that order), so a script can
check them without knowing the rest; ratios kept for context, with no goal of their own, go to
``other_ratios``; every other figure (rates, bytes, milliseconds) goes to ``absolute``.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, TypedDict

from feral.storage.db.connection import sqlite_version

from .catchup_bench import run_catchup
from .corpus import SEED
from .encoder_bench import run_encoder
from .incremental_bench import incremental_seconds
from .search_bench import QUERIES, run_search
from .storage_bench import BATCH, run_storage
from .tls_bench import run_tls_catchup
from .vector_bench import run_searchable_after_catchup, run_vector_leg

__all__ = ["GOALS", "OTHER_RATIOS", "Goal", "Report", "Sizes", "render_table", "run"]

ENCODER_SENTENCES = 2_000
"""Episode summaries embedded per thread count for the encoder's throughput."""


@dataclass(frozen=True)
class Sizes:
    """How much data each measurement uses."""

    rows: int
    """Facts written, merged and caught up between processes."""
    incremental_small: int
    """Facts in the small database of ``incremental_large_vs_small``."""
    incremental_large: int
    """Facts in its large database."""
    episodes: int
    """Episodes searched by ``hybrid_vs_sum``."""
    queries: int
    """Timed queries per search strategy."""

    @classmethod
    def full(cls) -> Sizes:
        return cls(100_000, 10_000, 1_000_000, 100_000, QUERIES)

    @classmethod
    def quick(cls) -> Sizes:
        """About two minutes on a two-core machine; the search store is half the full one."""
        return cls(20_000, 10_000, 100_000, 50_000, 60)

    @classmethod
    def scaled(cls, rows: int) -> Sizes:
        """``rows`` facts and episodes; incremental sync at ``min(rows, 10k)`` and ``10 * rows``."""
        return cls(rows, min(rows, 10_000), 10 * rows, rows, QUERIES)


@dataclass(frozen=True)
class Goal:
    """A target for one ratio: ``at_most`` says whether lower is better."""

    ratio: str
    target: float
    at_most: bool

    def met(self, value: float) -> bool:
        return value <= self.target if self.at_most else value >= self.target

    def describe(self) -> str:
        return f"{'<=' if self.at_most else '>='} {self.target:g}"


GOALS: tuple[Goal, ...] = (
    Goal("write_overhead", 1.5, at_most=True),
    Goal("merge_vs_plain", 0.6, at_most=False),
    Goal("stale_vs_fresh", 2.0, at_most=False),
    Goal("wire_bytes_ratio", 1.3, at_most=True),
    Goal("incremental_large_vs_small", 1.5, at_most=True),
    Goal("catchup_vs_merge", 0.5, at_most=False),
    Goal("hybrid_vs_sum", 1.5, at_most=True),
    Goal("vector_leg_vs_numpy", 2.0, at_most=True),
    Goal("tls_vs_plain_catchup", 0.9, at_most=False),
    Goal("tls_wire_bytes_ratio", 1.1, at_most=True),
)

OTHER_RATIOS: Mapping[str, str] = {
    "write_overhead_single_row": "write_overhead, one fact per transaction (fsync dominates)",
    "page_bytes_ratio": "sync pages against plain msgpack of the values, before framing",
    "cold_read_vs_numpy": "vector leg reading every vector (a first search) against numpy",
}
"""Ratios reported for context, with what each compares."""


class Report(TypedDict):
    machine: dict[str, Any]
    sizes: dict[str, int]
    ratios: dict[str, float]
    other_ratios: dict[str, float]
    absolute: dict[str, float]


def _machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "sqlite": sqlite_version(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
    }


def _incremental(sizes: Sizes) -> dict[str, float]:
    small = incremental_seconds(sizes.incremental_small)
    large = incremental_seconds(sizes.incremental_large)
    return {
        "incremental_large_vs_small": large / small,
        "incremental_small_s": small,
        "incremental_large_s": large,
    }


def _catchup(sizes: Sizes) -> dict[str, float]:
    figures = run_catchup(sizes.rows)
    del figures["rows"]  # in ``sizes`` already
    return figures


def _measurements(sizes: Sizes, seed: int) -> list[tuple[str, Callable[[], dict[str, float]]]]:
    """What :func:`run` measures, in order: a label for progress and the measurement."""
    incremental = f"{sizes.incremental_small:,} and {sizes.incremental_large:,}"
    encoder_texts = min(ENCODER_SENTENCES, sizes.episodes)
    return [
        (f"storage: {sizes.rows:,} facts", lambda: run_storage(sizes.rows, seed)),
        (f"catch-up: {sizes.rows:,} facts between processes", lambda: _catchup(sizes)),
        (
            f"tls: {sizes.rows:,}-fact catch-up over wss:// against ws://, twice each",
            lambda: run_tls_catchup(sizes.rows, repeats=1 if sizes.rows < 1000 else 2),
        ),
        (f"incremental: 100 changes at {incremental} facts", lambda: _incremental(sizes)),
        (
            f"search: {sizes.episodes:,} episodes, {sizes.queries} queries",
            lambda: run_search(sizes.episodes, sizes.queries, seed),
        ),
        (
            f"vector leg: {sizes.episodes:,} episodes against a numpy scan",
            lambda: run_vector_leg(sizes.episodes, sizes.queries, seed),
        ),
        (
            f"searchable: {sizes.rows:,}-fact catch-up until every row is embedded",
            lambda: run_searchable_after_catchup(sizes.rows),
        ),
        (
            f"encoder: {encoder_texts:,} sentences, {sizes.queries} queries, a serve process",
            lambda: run_encoder(encoder_texts, sizes.queries, seed),
        ),
    ]


def run(
    sizes: Sizes,
    seed: int = SEED,
    progress: Callable[[str], None] | None = None,
    only: frozenset[str] = frozenset(),
) -> Report:
    """Run every measurement, one after another (never two at once: they would share the CPU).

    ``only`` keeps the measurements whose label starts with one of its words (``vector``,
    ``search``, ...); the report then holds the ratios those measured. ``progress`` is told
    what starts. Raises ``RuntimeError`` if two measurements report a
    figure under the same name, so one can never silently overwrite the other.
    """
    figures: dict[str, float] = {}
    for what, measure in _measurements(sizes, seed):
        if only and what.split(":")[0].split()[0] not in only:
            continue
        if progress:
            progress(what)
        found = measure()
        if clash := figures.keys() & found.keys():
            raise RuntimeError(f"figures reported twice: {sorted(clash)}")
        figures.update(found)
    ratios = {goal.ratio: figures.pop(goal.ratio) for goal in GOALS if goal.ratio in figures}
    other = {name: figures.pop(name) for name in OTHER_RATIOS if name in figures}
    return Report(
        machine=_machine(),
        sizes=asdict(sizes),
        ratios=ratios,
        other_ratios=other,
        absolute=figures,
    )


# -- output ----------------------------------------------------------------------------------


def _format(value: float) -> str:
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _header(report: Report) -> list[str]:
    s, m = report["sizes"], report["machine"]
    return [
        "feral benchmark: each ratio measured in this run against plain SQLite doing the same work",
        f"Python {m['python']}, SQLite {m['sqlite']}, {m['cpu_count']} CPUs, {m['platform']}",
        f"facts: {s['rows']:,}, written in batches of {BATCH:,} (synchronous=FULL on both sides), "
        "merged and caught up",
        f"incremental sync: 100 changes at {s['incremental_small']:,} and "
        f"{s['incremental_large']:,} facts",
        f"search: {s['episodes']:,} episodes, {s['queries']} queries per strategy (medians); "
        "vector leg against a numpy scan of the same vectors",
    ]


def _goal_lines(ratios: Mapping[str, float]) -> list[str]:
    lines = [f"{'ratio':<28}{'value':>8}  {'goal':<8}  result"]
    met = 0
    for goal in (g for g in GOALS if g.ratio in ratios):
        value = ratios[goal.ratio]
        met += goal.met(value)
        verdict = "met" if goal.met(value) else "NOT MET"
        lines.append(f"{goal.ratio:<28}{value:>8.2f}  {goal.describe():<8}  {verdict}")
    lines.append(f"{met} of {len(ratios)} goals met")
    return lines


def render_table(report: Report) -> str:
    """The report as a readable table: each goal's ratio and whether it is met, then the
    ratios kept for context and the absolute figures."""
    lines = [*_header(report), "", *_goal_lines(report["ratios"]), ""]
    lines.append(f"{'other ratios (no goal)':<28}{'value':>8}  compares")
    lines += [
        f"{name:<28}{value:>8.2f}  {OTHER_RATIOS[name]}"
        for name, value in report["other_ratios"].items()
    ]
    lines += ["", f"{'absolute':<28}{'value':>12}"]
    lines += [f"{key:<28}{_format(v):>12}" for key, v in report["absolute"].items()]
    return "\n".join(lines)
