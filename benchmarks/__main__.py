"""``python -m benchmarks [--quick] [--json] [--rows N]``: run the storage benchmark, print it."""

from __future__ import annotations

import argparse
import json
import sys

from .storage_bench import DEFAULT_ROWS, QUICK_ROWS, render_table, run

__all__ = ["main"]


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="feral storage against plain SQLite doing the same work, in one run.",
    )
    parser.add_argument(
        "--quick", action="store_true", help=f"use {QUICK_ROWS:,} rows instead of {DEFAULT_ROWS:,}"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rows", type=int, default=None, help="number of rows (overrides --quick)")
    args = parser.parse_args(argv)
    if args.rows is not None and args.rows < 1:
        parser.error("--rows must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    rows = args.rows if args.rows is not None else QUICK_ROWS if args.quick else DEFAULT_ROWS
    report = run(rows)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(render_table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
