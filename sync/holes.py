"""Finding and repairing holes in a copy of an origin's log (docs/REPLICATION.md §5, "Holes").

Each origin's log is held as a gap-free prefix, so two nodes holding an origin up to one stamp
hold the same number of its entries. When the peer's CaughtUp shows more entries of an origin
than this node holds at an equal vector entry, this copy has a hole (a database restored from an
older copy): ask for that origin again from the start and merge every entry. The one link
handler (storage/link/handler.py), which the node's links and the simulator both drive, applies this
rule.

A repair is judged only by a CaughtUp that follows the re-sent stream: one that was on its way
before the peer read the request says nothing about the repair. The stream has begun once a
page of the origin continuing from the start (``after`` 0) arrives; the peer's next CaughtUp
follows the whole stream. If it still shows the hole and the peer holds no more of the origin
than when we asked, the link ends rather than loop (``log_diverged``). If the peer holds more
(it was taking entries back itself, from a third node, below the stream's cursor), we ask
again: the peer's count only grows, so this ends. Until the repair is judged nothing may move
the peer's cursor for that origin away from the stream (see :attr:`HoleRepair.busy`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .types import NodeId, VersionVector

__all__ = ["HoleCheck", "HoleRepair"]


@dataclass(frozen=True)
class HoleCheck:
    """What one CaughtUp revealed.

    Attributes:
        holes: origins newly found with a hole (for the log).
        ask: the origins to ask for from the start now (empty: send no Vector).
        diverged: a finished repair left a hole: the link must fail.
    """

    holes: frozenset[NodeId]
    ask: frozenset[NodeId] = frozenset()
    diverged: bool = False

    def request(self, vector: VersionVector) -> VersionVector:
        """The Vector that asks for every origin of :attr:`ask` from the start."""
        return {**vector, **{origin: 0 for origin in self.ask}}


@dataclass
class HoleRepair:
    """One link's repairs in progress."""

    repairing: set[NodeId] = field(default_factory=set)
    """Origins being taken again from the start: their pages are merged whole."""
    streaming: set[NodeId] = field(default_factory=set)
    """Those of :attr:`repairing` whose re-sent stream has begun."""
    asked: dict[NodeId, int] = field(default_factory=dict)
    """For each origin of :attr:`repairing`, how many entries the peer held when we asked."""

    @property
    def busy(self) -> bool:
        """A repair is under way: an anti-entropy Vector now would move the peer's cursor off
        the re-sent stream and end it early, so it waits until the repair is judged."""
        return bool(self.repairing)

    def page(self, origin: NodeId, after: int) -> bool:
        """Whether a page of ``origin`` continuing from ``after`` belongs to a repair (merge it
        whole); a page from the start shows the re-sent stream has begun."""
        if origin not in self.repairing:
            return False
        if after == 0:
            self.streaming.add(origin)
        return True

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
        judged = holes & self.streaming
        stuck = {o for o in judged if peer_entries.get(o, 0) <= self.asked[o]}
        if stuck:
            return HoleCheck(frozenset(stuck), diverged=True)
        self.repairing -= self.streaming - holes  # each stream that ended closed its hole
        self.streaming.clear()
        new = (holes - self.repairing) | judged  # judged: the peer's copy grew meanwhile
        if not new:
            return HoleCheck(frozenset())
        self.repairing |= new
        self.asked = {o: self.asked.get(o, 0) for o in self.repairing}
        self.asked.update({o: peer_entries.get(o, 0) for o in new})
        # A Vector resets the peer's every cursor: origins still waiting are asked for again.
        return HoleCheck(new, ask=frozenset(self.repairing))
