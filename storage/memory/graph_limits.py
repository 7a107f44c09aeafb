"""The entity graph's bounds and directions (storage/memory/graph.py), apart from its SQL.

The CLI builds its ``graph query`` options from these, so listing the commands (``feral
--help``) reads them without importing the store.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["DIRECTIONS", "MAX_HOPS", "MAX_RESULTS", "Direction"]

Direction = Literal["outbound", "inbound", "both"]
DIRECTIONS: tuple[Direction, ...] = ("outbound", "inbound", "both")
MAX_HOPS = 6
"""The deepest traversal asked for: further than this, every entity reaches nearly every other."""
MAX_RESULTS = 1_000
"""The most entities one traversal returns (the nearest ones, in traversal order)."""
