"""``python -m benchmarks [--quick] [--json] [--rows N] [--only NAMES]``: run the benchmarks, print
the report.

``python -m benchmarks retrieval [--json] [--embedder NAME ...]``: retrieval quality on the
household set instead (benchmarks/retrieval_bench.py), one table row per embedder and strategy.

``python -m benchmarks locomo [--data PATH_OR_URL] [--json] [--split all|tune|held]
[--through turns|ingest|both]``: recall of evidence turns on LoCoMo-shaped conversations, feral
beside plain BM25 and plain cosine (benchmarks/locomo_bench.py; without ``--data`` our small
synthetic set), the turns given one by one, through ``feral memory ingest``, or both ways.

``python -m benchmarks fusion [--data PATH_OR_URL]``: every hybrid fusion variant tried on the
same candidates of the household set and of conversations, per tuning and held split
(benchmarks/fusion_tuning.py).

``python -m benchmarks rerank [--data PATH_OR_URL] [--write]``: fit the hybrid's turn reranker
on the tuning half of conversations (benchmarks/rerank_fit.py).

``python -m benchmarks absorb [--json]``: whether absorb keeps every distinct fact, per class
on the labelled set's tuning and held-out halves (benchmarks/absorb_quality.py);
``absorb-pairs [--json]`` and ``absorb-cost [--json] [--facts N] [--writes N]``: its
near-duplicate threshold and its cost (benchmarks/absorb_bench.py, benchmarks/absorb_cost.py).

``python -m benchmarks import [--json] [--lines N ...]``: what classifying a bulk import costs
against writing its lines as given (benchmarks/import_cost.py).

``python -m benchmarks secrets [--json] [--rounds N]``: the secret scan's recall and false
positives on the labelled set, tuning half and held-out half, and its cost per write
(benchmarks/secret_set.py).

``python -m benchmarks cli [--json] [--facts N] [--runs N]``: how fast ``feral --help``,
``remember`` and ``search`` answer, whole processes against ``python -c pass``
(benchmarks/cli_bench.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict

from .report import Sizes, render_table, run
from .retrieval_bench import render_retrieval, run_retrieval

__all__ = ["main"]


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="feral against plain SQLite doing the same work, measured in one run.",
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes: about two minutes")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--rows",
        type=int,
        default=None,
        help="N facts and N episodes; incremental sync at min(N, 10k) and 10N (overrides --quick)",
    )
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated measurements to run: storage, catch-up, tls, incremental, search, "
        "vector (the vector leg against numpy), searchable (a catch-up until embedded)",
    )
    args = parser.parse_args(argv)
    if args.rows is not None and args.rows < 1:
        parser.error("--rows must be at least 1")
    return args


def _sizes(args: argparse.Namespace) -> Sizes:
    if args.rows is not None:
        return Sizes.scaled(args.rows)
    return Sizes.quick() if args.quick else Sizes.full()


def _progress(started: float) -> Callable[[str], None]:
    """Progress on stderr, so ``--json`` stays one object on stdout; the seconds since the start
    show where a long run spends its time."""

    def note(what: str) -> None:
        print(f"= {time.monotonic() - started:6.1f} s  {what}", file=sys.stderr, flush=True)

    return note


def _parse_retrieval(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks retrieval",
        description="recall@5 and MRR@10 per query type, through Node.search, per embedder.",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON list")
    parser.add_argument(
        "--embedder", action="append", default=None, help="only this embedder (repeatable)"
    )
    return parser.parse_args(argv)


def _retrieval(argv: list[str]) -> int:
    args = _parse_retrieval(argv)
    note = _progress(time.monotonic())
    runs = run_retrieval(args.embedder, progress=note)
    note("done")
    if args.json:
        print(json.dumps([asdict(r) for r in runs], indent=2))
    else:
        print(render_retrieval(runs))
    return 0


def _locomo(argv: list[str]) -> int:
    from .conversation_set import SYNTHETIC, load_conversations
    from .locomo_bench import SPLITS, THROUGH, render_locomo, run_locomo, summarise

    parser = argparse.ArgumentParser(
        prog="python -m benchmarks locomo",
        description="turn-level evidence recall per question category, feral beside baselines.",
    )
    parser.add_argument(
        "--data",
        default=str(SYNTHETIC),
        help="LoCoMo-shaped JSON, a path or a URL (LoCoMo is CC BY-NC 4.0: bring your own copy)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per split")
    parser.add_argument("--split", choices=("every", *SPLITS), default="every")
    parser.add_argument(
        "--through",
        choices=THROUGH,
        default="turns",
        help="give feral the turns one by one, through `feral memory ingest`, or both ways",
    )
    args = parser.parse_args(argv)
    try:
        conversations = load_conversations(args.data)
    except (OSError, ValueError, KeyError) as exc:
        print(f"python -m benchmarks locomo: cannot read {args.data}: {exc}", file=sys.stderr)
        return 1
    note = _progress(time.monotonic())
    scored = run_locomo(conversations, progress=note, through=args.through)
    note("done")
    splits = SPLITS if args.split == "every" else (args.split,)
    if args.json:
        print(json.dumps({split: summarise(scored, split) for split in splits}, indent=2))
    else:
        print("\n\n".join(render_locomo(scored, split) for split in splits))
    return 0


def _fusion(argv: list[str]) -> int:
    from .conversation_set import SYNTHETIC, load_conversations
    from .fusion_tuning import collect_conversations, collect_household, render_tuning, tune

    parser = argparse.ArgumentParser(prog="python -m benchmarks fusion")
    parser.add_argument("--data", default=str(SYNTHETIC), help="LoCoMo-shaped JSON, path or URL")
    args = parser.parse_args(argv)
    conversations = load_conversations(args.data)
    tables = {
        "household": tune(collect_household()),
        "conversations": tune(collect_conversations(conversations)),
    }
    print(render_tuning(tables))
    return 0


def _absorb(command: str, argv: list[str]) -> int:
    from .absorb_bench import measure_pairs, render_pairs
    from .absorb_cost import run_absorb
    from .absorb_quality import render_quality, run_quality

    parser = argparse.ArgumentParser(prog=f"python -m benchmarks {command}")
    parser.add_argument("--json", action="store_true", help="print JSON")
    if command == "absorb-cost":
        parser.add_argument("--facts", type=int, default=10_000, help="facts stored first")
        parser.add_argument("--writes", type=int, default=100, help="writes timed each way")
    args = parser.parse_args(argv)
    if command == "absorb-cost":
        result = run_absorb(args.facts, args.writes)
        print(
            json.dumps(result, indent=2)
            if args.json
            else "\n".join(f"{name:16} {value}" for name, value in result.items())
        )
        return 0
    if command == "absorb":
        report = run_quality()
        print(json.dumps(report, indent=2) if args.json else render_quality(report))
        return 0
    table = measure_pairs()
    print(json.dumps(table, indent=2) if args.json else render_pairs(table))
    return 0


def _cli(argv: list[str]) -> int:
    from .cli_bench import render_cli, run_cli

    parser = argparse.ArgumentParser(prog="python -m benchmarks cli")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--facts", type=int, default=5_000, help="facts stored first")
    parser.add_argument("--runs", type=int, default=15, help="timed runs of each command")
    args = parser.parse_args(argv)
    if args.facts < 1 or args.runs < 1:
        parser.error("--facts and --runs must be at least 1")
    result = run_cli(args.facts, args.runs)
    print(json.dumps(result, indent=2) if args.json else render_cli(result))
    return 0


def _import(argv: list[str]) -> int:
    from .import_cost import SIZES, render_import, run_import

    parser = argparse.ArgumentParser(prog="python -m benchmarks import")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--lines", type=int, nargs="+", default=list(SIZES), help="lines each")
    args = parser.parse_args(argv)
    rows = run_import(tuple(args.lines))
    print(json.dumps(rows, indent=2) if args.json else render_import(rows))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["secrets"]:
        from .secret_set import main as secrets_main

        return secrets_main(argv[1:])
    if argv[:1] == ["import"]:
        return _import(argv[1:])
    if argv[:1] == ["cli"]:
        return _cli(argv[1:])
    if argv[:1] == ["fusion"]:
        return _fusion(argv[1:])
    if argv[:1] == ["locomo"]:
        return _locomo(argv[1:])
    if argv[:1] == ["rerank"]:
        from .rerank_fit import main as rerank_main

        return rerank_main(argv[1:])
    if argv[:1] == ["retrieval"]:
        return _retrieval(argv[1:])
    if argv[:1] in (["absorb"], ["absorb-cost"], ["absorb-pairs"]):
        return _absorb(argv[0], argv[1:])
    args = _parse(argv)
    note = _progress(time.monotonic())
    only = frozenset(name.strip() for name in args.only.split(",") if name.strip())
    report = run(_sizes(args), progress=note, only=only)
    note("done")
    print(json.dumps(report, indent=2) if args.json else render_table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
