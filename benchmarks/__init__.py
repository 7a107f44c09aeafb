"""On-demand benchmarks (DESIGN §7): ratios measured in one run, against plain SQLite doing the
same work (and, for search, the hybrid against its own two legs).

Run from the project root with ``python -m benchmarks [--quick] [--json] [--rows N]``. The
measurements are never part of the test suite: ``tests/test_benchmarks.py`` only runs a tiny
store through the harness and checks the report's shape, never a figure.
"""

from __future__ import annotations

__all__: list[str] = []
