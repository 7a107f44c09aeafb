"""On-demand benchmarks (DESIGN §7): ratios against plain SQLite measured in one run.

Run from the project root with ``python -m benchmarks [--quick] [--json] [--rows N]``. They are
never part of the test suite.
"""

from __future__ import annotations

__all__: list[str] = []
