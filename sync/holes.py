"""Finding and repairing holes in a copy of an origin's log (docs/PROTOCOL.md, "Holes").

Each origin's log is held as a gap-free prefix, so two nodes holding an origin up to one stamp
hold the same number of its entries. When the peer's CaughtUp shows more entries of an origin
than this node holds at an equal vector entry, this copy has a hole (a database restored from an
older copy): ask for that origin again from the start and merge every entry. A repair that did
not close the hole ends the link rather than loop. The one link handler (storage/link.py), which
the node's links and the simulator both drive, applies this rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .types import NodeId, VersionVector

__all__ = ["HoleCheck", "HoleRepair"]


@dataclass(frozen=True)
class HoleCheck:
    """What one CaughtUp revealed: the origins to take again, or that a repair failed."""

    holes: frozenset[NodeId]
    diverged: bool = False

    def request(self, vector: VersionVector) -> VersionVector:
        """The Vector that asks for every hole's origin from the start."""
        return {**vector, **{origin: 0 for origin in self.holes}}


@dataclass
class HoleRepair:
    """One link's repairs in progress."""

    repairing: set[NodeId] = field(default_factory=set)
    """Origins being taken again from the start: their pages are merged whole."""

    def check(
        self,
        vector: VersionVector,
        entries: Mapping[NodeId, int],
        peer_vector: VersionVector,
        peer_entries: Mapping[NodeId, int],
    ) -> HoleCheck:
        """Compare entry counts where both sides hold an origin up to the same stamp."""
        holes = frozenset(
            origin for origin, hlc in peer_vector.items()
            if vector.get(origin) == hlc and peer_entries.get(origin, 0) > entries.get(origin, 0)
        )  # fmt: skip
        if not holes:
            self.repairing.clear()
            return HoleCheck(holes)
        if holes <= self.repairing:
            return HoleCheck(holes, diverged=True)
        self.repairing |= holes
        return HoleCheck(holes)
