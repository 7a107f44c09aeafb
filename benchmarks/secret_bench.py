"""``python -m benchmarks.secret_bench [--lines N] [--rounds R] [--json]``: what the secret scan
costs an import.

The same N-line import (half plain-text notes, half JSON triples, from benchmarks/corpus.py) is
run into a fresh home with the scan and without it, alternating, R times each, in one run: the
lines are parsed as ``feral memory import`` parses them, screened as it screens them
(node/secrets/scan.py), then written by ``Node.import_facts``, which scans each batch again.
"Without" turns both scans off. The figure is the ratio of the medians, with the scan's own time
per line measured on the same lines. No embedding model: the import's write path, not the model.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from feral.cli.memory.memory_transfer_commands import parse_import_line
from feral.node.node import Node
from feral.node.secrets import scan as scan_module
from feral.node.secrets.scan import find_secret, screen_lines, triple_text
from feral.node.settings.config import load_settings, save_settings

from .corpus import make_episodes, make_triples

__all__ = ["import_lines", "main", "run_secret_bench"]

Triple = tuple[str, str, str]


def import_lines(count: int) -> list[str]:
    """``count`` import lines: notes and JSON triples, alternating."""
    notes = [text for text, _ in make_episodes(count // 2 + 1)]
    triples = make_triples(count // 2 + 1)
    lines = []
    for index in range(count):
        if index % 2:
            s, p, o = triples[index // 2]
            lines.append(json.dumps({"subject": s, "predicate": p, "object": o}))
        else:
            lines.append(notes[index // 2])
    return lines


def _parsed(lines: list[str]) -> list[tuple[int, Triple]]:
    parsed = ((n, parse_import_line(line, n)) for n, line in enumerate(lines, 1))
    return [(n, t) for n, t in parsed if t is not None]


@contextmanager
def _scan_off() -> Iterator[None]:
    """The node's own batch scan replaced by nothing (the CLI's screen is skipped by the caller):
    the node imports ``refuse_triples`` from the scanner's module when it imports facts."""
    with mock.patch.object(scan_module, "refuse_triples", lambda *_, **__: None):
        yield


async def _import(home: Path, lines: list[str], scan: bool) -> tuple[float, int]:
    """Seconds to parse, (screen,) and write ``lines`` into the fresh ``home``."""
    settings = load_settings(home)
    save_settings(
        home,
        dataclasses.replace(settings, memory=dataclasses.replace(settings.memory, embedder="none")),
    )
    node = await Node.open(home)
    try:
        started = time.perf_counter()
        numbered = _parsed(lines)
        if scan:
            triples, _ = screen_lines(numbered, triple_text, "refuse")
            written = await node.import_facts(triples)
        else:
            with _scan_off():
                written = await node.import_facts([t for _, t in numbered])
        elapsed = time.perf_counter() - started
    finally:
        await node.close()
    return elapsed, written


def run_secret_bench(lines: int = 10_000, rounds: int = 5) -> dict[str, float]:
    """The medians with and without the scan, their ratio, and the scan's time per line."""
    text = import_lines(lines)
    times: dict[bool, list[float]] = {True: [], False: []}
    written: set[int] = set()
    with tempfile.TemporaryDirectory(prefix="feral-secret-bench-") as name:
        for round_ in range(rounds):
            for scan in (round_ % 2 == 0, round_ % 2 != 0):  # alternate which goes first
                home = Path(name) / f"{round_}-{scan}"
                elapsed, facts = asyncio.run(_import(home, text, scan))
                times[scan].append(elapsed)
                written.add(facts)
    assert len(written) == 1, f"the two imports wrote different facts: {written}"
    triples = [t for _, t in _parsed(text)]
    started = time.perf_counter()
    for triple in triples:
        find_secret(triple_text(triple))
    scan_s = time.perf_counter() - started
    with_scan, without = statistics.median(times[True]), statistics.median(times[False])
    return {
        "lines": float(lines),
        "import_with_scan_s": with_scan,
        "import_without_scan_s": without,
        "ratio": with_scan / without,
        "scan_us_per_line": scan_s / len(triples) * 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.secret_bench")
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = run_secret_bench(args.lines, args.rounds)
    if args.json:
        print(json.dumps(figures))
        return 0
    print(
        f"{args.lines} import lines, median of {args.rounds}: "
        f"{figures['import_with_scan_s']:.3f} s with the secret scan, "
        f"{figures['import_without_scan_s']:.3f} s without: ratio {figures['ratio']:.3f}; "
        f"the scan alone {figures['scan_us_per_line']:.1f} us per line"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
