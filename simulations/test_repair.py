"""A repair of a log hole, interleaved with everything a running link does (issue 11).

Two devices; one is restored from an older copy under its own id and writes at once, so its own
log has a hole its peer can fill. The machine then interleaves frame deliveries with
anti-entropy from either end (``feral serve`` sends one every minute, whatever is in flight)
and writes on either device, and finally runs ``Cluster.sync_until_quiet`` with no
anti-entropy at all. Oracles: ``Cluster.check_step`` after every step, which includes that an
honest link never ends in ``log_diverged`` (simulations/simnode.py); and at the end, one quiet
round must have found and repaired the hole, on whichever side of the link it is.
"""

from __future__ import annotations

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from feral.storage.memory import memories

from .cluster import Cluster
from .profiles import TOTALS, pytest_settings
from .simnode import SimNode

__all__ = ["RepairMachine"]

MAX_ROUNDS = 2_000


def remember(node: SimNode, text: str) -> None:
    node.commit(memories.remember_fact, (node.name, "wrote", text), now_ms=node.wall())


class RepairMachine(RuleBasedStateMachine):
    """A hole on one end of one link, and a repair that must run to completion."""

    def __init__(self) -> None:
        super().__init__()
        self.cluster: Cluster | None = None
        self.writes = 0

    @property
    def c(self) -> Cluster:
        assert self.cluster is not None
        return self.cluster

    @initialize(
        restored=st.integers(0, 1),
        kept=st.integers(2, 8),
        lost=st.integers(1, 3),
        page_limit=st.sampled_from([1, 2]),
    )
    def start(self, restored: int, kept: int, lost: int, page_limit: int) -> None:
        """Write ``kept`` facts, back up, write ``lost`` more (the peer takes them), restore
        the copy under the same id, write once more, and open the link."""
        self.cluster = Cluster(2, "chain", page_limit)
        node = self.c.nodes[restored]
        for n in range(kept):
            remember(node, f"kept {n}")
        self.c.sync_until_quiet(MAX_ROUNDS)
        self.c.backup(restored)
        for n in range(lost):
            remember(node, f"lost {n}")
        self.c.sync_until_quiet(MAX_ROUNDS)
        self.c.restore(restored, new_identity=False)
        self.c.time.advance(1_000)
        remember(node, "after the restore")
        self.c.connect(*self.c.ends(0))
        TOTALS["examples"] += 1
        TOTALS["nodes"] += 2

    def has_frames(self) -> bool:
        return self.cluster is not None and bool(self.c.network.busy_links())

    @precondition(has_frames)
    @rule(picks=st.lists(st.integers(0, 1), min_size=1, max_size=3))
    def deliver(self, picks: list[int]) -> None:
        for i in picks:
            links = self.c.network.busy_links()
            if not links:
                return
            self.c.deliver(links[i % len(links)])

    @rule(end=st.integers(0, 1))
    def anti_entropy(self, end: int) -> None:
        """One end re-sends its vector, whatever is in flight (a repair included)."""
        sender, peer = self.c.nodes[end], self.c.nodes[1 - end]
        sender.anti_entropy(peer.node_id)

    @rule(end=st.integers(0, 1))
    def write(self, end: int) -> None:
        self.writes += 1
        remember(self.c.nodes[end], f"meanwhile {self.writes}")

    @invariant()
    def safe(self) -> None:
        if self.cluster is not None:
            TOTALS["steps"] += 1
            self.c.check_step()

    def teardown(self) -> None:
        if self.cluster is None:
            return
        try:
            TOTALS["rounds"] += self.c.sync_until_quiet(MAX_ROUNDS)
            self.c.check_step()
            self.c.check_converged()
        finally:
            TOTALS.update(self.c.stats)
            self.c.close()


RepairMachine.TestCase.settings = pytest_settings("repair")
TestRepair = RepairMachine.TestCase
# Half a minute or more of examples on two busy cores: out of the fast lane.
pytestmark = pytest.mark.slow
