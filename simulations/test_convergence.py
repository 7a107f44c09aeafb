"""Convergence of real nodes (SQLite store, HLC, SyncSession) over a faulty simulated network.

Rules: writes that collide (remember, edit, archive/restore, hard delete, bulk import, boosts of
one memory's meta row on two devices, writes made while a clock is far ahead, supersedes with their
edges and meta rows, typed links, entities named on colliding names and relations between them),
frame delivery across links, hostile in-connection faults, connection resets and reconnects,
partitions and heals, anti-entropy, time passing, clocks set off within and beyond the skew window,
restarts, backups and restores, forged colliding entries, a disk that fails under the links
(simulations/faults.py), and nukes followed by devices that join later (simulations/nuking.py).

Every step is checked for safety (``Cluster.check_step``): no node's high-water mark goes back
(except right after a restore from backup, which lowers it by design), every version-vector
entry is an entry the log holds, each origin's log is held as a gap-free prefix of what that
origin wrote, entry counts are true, no node stamps a write at or below its mark, and no
accepted page carries a stamp beyond the skew window at the receiver's clock at receipt.

At the end (``teardown``) the clocks are corrected and everything heals; a few rounds run while
stamps from a clock that was ahead are still refused; then virtual time passes the newest stamp
(the defined recovery from a clock beyond the window: peers accept those writes once their own
clocks come within the window of them); ``Cluster.sync_until_quiet`` must reach quiet, and then
every vector is equal, every export byte-identical, every row holds its LWW winner among all
accepted writes, every graph query answers alike, every device lists the same conflict records,
none of them a sequential edit and none missing (simulations/conflict_oracle.py), and every log
holds every write: quiet means
both ends of every link hold the
same, so no anti-entropy is needed to find a hole. ``Cluster.settle`` (anti-entropy passes, as
``feral serve`` makes them) must then change nothing that breaks this.

An honest connection (one no hostile fault touched) never ends in ``log_diverged``: a repair
runs to completion whatever interleaves with it (anti-entropy, pushes, the peer's writes).
"""

from __future__ import annotations

import sys

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    MultipleResults,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
)

from feral.storage.memory import graph, memories
from feral.sync.ids import fact_id

from .cluster import TOPOLOGIES, Cluster
from .convergence_draws import Triple, node_index, triple_strategy, triples
from .forgery import forge_collision, forge_snapshot, relayed_entries
from .memory_rules import MemoryModelRules
from .network import Link
from .profiles import TOTALS, pytest_settings
from .pruning import RETENTION_MS, prune_device
from .simnode import MAX_SKEW_MS, SimNode
from .version_rules import VersionRules

__all__ = ["MAX_ROUNDS", "ConvergenceMachine"]

MAX_ROUNDS = 5_000
"""Rounds ``sync_until_quiet`` may take at the end (automerge's ``MAX_ITER``)."""

W = MAX_SKEW_MS
SETTLE_ROUNDS = 20
"""Rounds run at the end with corrected clocks, before virtual time passes the newest stamp."""

pick = st.integers(0, 63)
SKEWS = [0, -(W - 1), -60_000, -1, 1, 60_000, W - 1, W + 1, W + 60_000, 3_600_000, -(W + 60_000)]
"""Clock offsets: none, within the window, and beyond it (+1 h is TEST-CATALOG 13)."""
AHEAD = [W + 1, W + 60_000, 3_600_000]
START_SKEWS = [0, 0, 0, -1, 1, 60_000, -60_000, W - 1, -(W - 1)]
MAX_NODES = 6
"""Devices a cluster may grow to as new ones join."""


class ConvergenceMachine(MemoryModelRules, VersionRules, RuleBasedStateMachine):
    """2–5 devices in a chain, star or mesh, writing colliding facts through every fault (the
    memory model's rules, on meta rows, edges and entities, are in simulations/memory_rules.py)."""

    def __init__(self) -> None:
        super().__init__()
        self.cluster: Cluster | None = None

    @property
    def c(self) -> Cluster:
        assert self.cluster is not None
        return self.cluster

    def node(self, i: int) -> SimNode:
        return self.c.nodes[i % len(self.c.nodes)]

    @initialize(
        n=st.integers(2, 5),
        topology=st.sampled_from(TOPOLOGIES),
        page_limit=st.sampled_from([1, 2, 1000]),
        skews=st.lists(st.sampled_from(START_SKEWS), min_size=5, max_size=5),
    )
    def start(self, n: int, topology: str, page_limit: int, skews: list[int]) -> None:
        """Devices' clocks start a little off true time (each within the window), as real
        ones do; two of them may still be too far apart for a handshake."""
        self.cluster = Cluster(n, topology, page_limit)
        for node, skew in zip(self.c.nodes, skews, strict=False):
            node.wall.skew_ms = skew
        for edge in range(len(self.c.edges)):
            self.c.connect(*self.c.ends(edge))
        TOTALS["examples"] += 1
        TOTALS["nodes"] += n

    @initialize(target=triples, facts=st.lists(triple_strategy, min_size=1, max_size=4))
    def first_facts(self, facts: list[Triple]) -> MultipleResults[Triple]:
        """Facts to write from the start (the write rules need some)."""
        return multiple(*facts)

    @rule(target=triples, triple=triple_strategy)
    def new_fact(self, triple: Triple) -> Triple:
        return triple

    # -- local writes --------------------------------------------------------------------------

    @staticmethod
    def _edit(n: SimNode, triple: Triple, confidence: float = 1.0) -> None:
        """Remember the fact (an archived or deleted one is written again); if it is live there
        already, remembering writes nothing, so archive it instead. Either way one write."""
        if not n.commit(memories.remember_fact, triple, now_ms=n.wall(), confidence=confidence):
            n.commit(memories.set_archived, fact_id(*triple), True)

    @rule(node=node_index, triple=triples, confidence=st.sampled_from([1.0, 0.5]))
    def write(self, node: int, triple: Triple, confidence: float) -> None:
        self._edit(self.node(node), triple, confidence)

    @rule(node=node_index, other=st.integers(1, 4), triple=triples)
    def write_on_two(self, node: int, other: int, triple: Triple) -> None:
        """Two devices write one fact at the same moment (TEST-CATALOG 1 and 2): with equal
        clocks and marks their stamps are equal, and only the node id breaks the tie."""
        first = self.node(node)
        second = self.node((node + other) % len(self.c.nodes))
        if second is not first:
            self._edit(first, triple, 0.5)
            self._edit(second, triple, 1.0)

    @rule(node=node_index, triple=triples, ahead=st.sampled_from(AHEAD))
    def write_from_the_future(self, node: int, triple: Triple, ahead: int) -> None:
        """TEST-CATALOG 13: write while the clock is far ahead, then put the clock back."""
        n = self.node(node)
        skew, n.wall.skew_ms = n.wall.skew_ms, ahead
        self._edit(n, triple)
        n.wall.skew_ms = skew

    @rule(node=node_index, triples=st.lists(triples, min_size=1, max_size=4))
    def bulk_write(self, node: int, triples: list[Triple]) -> None:
        n = self.node(node)
        n.commit(memories.import_facts, triples, now_ms=n.wall())

    @rule(node=node_index, triple=triples, archived=st.booleans())
    def archive_or_restore(self, node: int, triple: Triple, archived: bool) -> None:
        self.node(node).commit(memories.set_archived, fact_id(*triple), archived)

    @rule(node=node_index, triple=triples)
    def hard_delete(self, node: int, triple: Triple) -> None:
        self.node(node).commit(memories.nuke, fact_id(*triple))

    # -- the network ---------------------------------------------------------------------------

    def _busy(self, i: int) -> Link:
        links = self.c.network.busy_links()
        return links[i % len(links)]

    def has_frames(self) -> bool:
        return self.cluster is not None and bool(self.c.network.busy_links())

    @precondition(has_frames)
    @rule(picks=st.lists(pick, min_size=1, max_size=24))
    def deliver(self, picks: list[int]) -> None:
        """Deliver frames one by one, each from a link the pick chooses (links interleave)."""
        for i in picks:
            if not self.c.network.busy_links():
                return
            self.c.deliver(self._busy(i))

    @precondition(has_frames)
    @rule(i=pick, fault=st.sampled_from(["drop", "duplicate", "reorder"]))
    def hostile(self, i: int, fault: str) -> None:
        """Lose, repeat or swap a frame inside a connection (see network.py: not a WebSocket
        fault; the session must refuse, never diverge)."""
        getattr(self.c.network, fault)(self._busy(i))

    def _edge(self, i: int) -> tuple[int, bool, bool]:
        """Link ``i`` (modulo the topology): its index, whether connected, whether cut."""
        c = self.c
        edge = i % len(c.edges)
        a, b = c.ends(edge)
        cut = tuple(sorted((a.node_id, b.node_id))) in c.network.partitioned
        return edge, c.connected(a, b), cut

    @rule(i=pick)
    def reset_or_reconnect(self, i: int) -> None:
        """A live connection breaks (the faithful loss: all in flight on it is lost); a closed
        link that is not partitioned reconnects (new sessions)."""
        edge, connected, cut = self._edge(i)
        if connected:
            self.c.reset(edge)
        elif not cut:
            self.c.connect(*self.c.ends(edge))

    @rule(i=pick, forward=st.booleans())
    def anti_entropy(self, i: int, forward: bool) -> None:
        """One end of a live link re-sends its vector, as ``feral serve`` does periodically."""
        a, b = self.c.ends(self._edge(i)[0])
        sender, peer = (a, b) if forward else (b, a)
        sender.anti_entropy(peer.node_id)

    @rule(i=pick)
    def partition_or_heal(self, i: int) -> None:
        """Cut a link (its connection breaks, no reconnecting), or heal a cut one."""
        edge, _, cut = self._edge(i)
        if cut:
            self.c.heal(edge)
        else:
            self.c.partition(edge)

    # -- clocks --------------------------------------------------------------------------------

    @rule(ms=st.sampled_from([1, 1_000, 60_000, 2 * W]), rounds=st.sampled_from([0, 1, 4]))
    def advance_time(self, ms: int, rounds: int) -> None:
        """Time passes, and meanwhile each busy link carries up to ``rounds`` frames."""
        self.c.time.advance(ms)
        self.c.deliver_rounds(rounds)

    @rule(node=node_index, skew=st.sampled_from(SKEWS))
    def set_clock(self, node: int, skew: int) -> None:
        """Set a device's clock off (within or beyond the window) or right again. Beyond the
        window its handshakes are refused, and stamps it makes then are refused by peers
        until their clocks come within the window of them."""
        self.node(node).wall.skew_ms = skew

    # -- pruning and snapshots (simulations/pruning.py) -----------------------------------------

    @rule(node=node_index)
    def prune(self, node: int) -> None:
        """A device prunes its log and tombstones (``feral sync prune``): nothing a peer heard
        from within the window lacks may go (checked against that peer's real holdings)."""
        n = self.node(node)
        if not n.is_down and not n.faults.active:
            prune_device(self.c, n)

    @rule(node=node_index)
    def away_past_the_window(self, node: int) -> None:
        """A device is cut off, more than the retention window passes, and every other device
        prunes: when it comes back it holds less than their floors and gets a snapshot."""
        n, c = self.node(node), self.c
        c.isolate(n)
        c.time.advance(RETENTION_MS + 60_000)
        edges, away = c.edges, c.nodes.index(n)
        c.edges = [edge for edge in edges if away not in edge]  # the others keep syncing
        try:
            c.run_rounds(SETTLE_ROUNDS)
        finally:
            c.edges = edges
        for other in c.nodes:
            if other is not n and not other.is_down and not other.faults.active:
                prune_device(c, other)
        c.stats["absences"] += 1

    @rule(
        node=node_index, action=st.sampled_from(["restart", "backup", "restore", "restore-as-new"])
    )
    def node_life(self, node: int, action: str) -> None:
        """Restart a device, copy its database aside, or restore it from that older copy:
        under its own node id (TEST-CATALOG 17: it must resume above every stamp it issued,
        and take back what it lost), or taking a new id. Without a copy yet, a restore takes
        one."""
        i = node % len(self.c.nodes)
        if action == "restart":
            self.c.restart(i)
        elif action == "backup" or i not in self.c.backups:
            self.c.backup(i)
        else:
            self.c.restore(i, new_identity=action == "restore-as-new")

    @rule(node=node_index, i=pick)
    def forge_colliding_entry(self, node: int, i: int) -> None:
        """A hostile paired device sends a node an entry under a stamp the node holds for
        another origin, with other content: an integrity alarm, and nothing changes. A device
        that is down, or holds nothing relayed yet, is skipped."""
        n = self.node(node)
        if n.is_down or n.faults.active:
            return
        held = relayed_entries(n)
        if held:
            n.problems.extend(forge_collision(n, *held[i % len(held)]))
            TOTALS["forged"] += 1

    @rule(node=node_index, other=st.integers(1, 4))
    def forge_snapshot(self, node: int, other: int) -> None:
        """A hostile paired device sends a node a snapshot page it did not ask for, claiming to
        have seen and collected everything (simulations/forgery.py): refused, nothing changes
        (the end's oracles see any change)."""
        receiver = self.node(node)
        sender = self.node(node + other)
        if sender is not receiver and forge_snapshot(self.c, receiver, sender):
            TOTALS["forged_snapshots"] += 1

    # -- a failing disk ------------------------------------------------------------------------

    @rule(
        node=node_index,
        passes=st.integers(0, 6),
        failures=st.sampled_from([1, 2, 5, None]),
        whole=st.booleans(),
    )
    def disk_fails(self, node: int, passes: int, failures: int | None, whole: bool) -> None:
        """The device's disk fills up (or an import holds the write lock past the timeout):
        after ``passes`` more writes, ``failures`` writes fail (``None``: every one until it
        clears), undoing their statement or, with ``whole``, their transaction. Whatever write
        of a link it hits (a page, an ack's or a session's bookkeeping), the link is dropped
        and recorded, nothing is half-applied (``check_step``), no peer is told a page is held
        that is not, and sync resumes once it clears (``teardown``)."""
        self.node(node).faults.set(passes=passes, failures=failures, whole=whole)
        TOTALS["disk_faults"] += 1

    @rule(node=node_index)
    def disk_clears(self, node: int) -> None:
        """Space is back: writes work again, and the links reconnect as they would."""
        self.node(node).faults.clear()

    # -- a nuke, then a new device ---------------------------------------------------------------

    @rule(node=node_index)
    def remember_secret(self, node: int) -> None:
        """Write a fact whose words no other write uses (simulations/nuking.py)."""
        self.c.secrets.remember(self.node(node))

    @rule(node=node_index, i=pick)
    def nuke_secret(self, node: int, i: int) -> None:
        """Nuke a secret on a device that holds it live."""
        self.c.secrets.nuke(self.node(node), i)

    def can_grow(self) -> bool:
        return self.cluster is not None and len(self.c.nodes) < MAX_NODES

    @precondition(can_grow)
    @rule(sponsor=node_index)
    def new_device(self, sponsor: int) -> None:
        """A brand-new device pairs and catches up from ``sponsor``: it never receives the
        words of a secret the sponsor had nuked, anywhere in its database, and converges."""
        self.c.secrets.join(self.c, sponsor % len(self.c.nodes))
        TOTALS["nodes"] += 1

    @precondition(can_grow)
    @rule(node=node_index, i=pick)
    def nuke_then_new_device(self, node: int, i: int) -> None:
        """A device nukes a secret it holds, then a brand-new device pairs with it at once."""
        n = self.node(node)
        self.c.secrets.nuke(n, i)
        self.c.secrets.join(self.c, self.c.nodes.index(n))
        TOTALS["nodes"] += 1

    # -- checks --------------------------------------------------------------------------------

    @invariant()
    def safe(self) -> None:
        if self.cluster is not None:
            TOTALS["steps"] += 1
            self.c.check_step()

    def teardown(self) -> None:
        if self.cluster is None:
            return
        try:
            if sys.exc_info()[0] is None:  # a step failed already: report that, not this
                self.converge()
        finally:
            TOTALS["max_rounds"] = max(TOTALS["max_rounds"], self.c.stats.pop("max_rounds", 0))
            TOTALS.update(self.c.stats)
            self.c.close()

    def converge(self) -> None:
        """Correct every clock and heal; sync a while (stamps from a clock that was ahead are
        still refused, a failing disk still fails); clear every disk; let time pass the newest
        stamp; sync until quiet and compare; then run
        anti-entropy passes as ``feral serve`` does, and compare again."""
        c = self.c
        for node in c.nodes:
            node.wall.skew_ms = 0
        c.run_rounds(SETTLE_ROUNDS)  # a failing disk still fails: its links keep dropping
        c.check_step()
        for node in c.nodes:
            node.faults.clear()
        c.pass_the_newest_stamp()
        # One round finds and repairs every hole: quiet means both sides hold the same.
        TOTALS["rounds"] += c.sync_until_quiet(MAX_ROUNDS)
        self.prune_alike()
        c.check_converged()
        TOTALS["rounds"] += c.settle(MAX_ROUNDS)
        self.prune_alike()
        c.check_step()
        c.check_converged()
        self.check_graphs_agree()

    def prune_alike(self) -> None:
        """Devices may hold different tombstones: each collects at its own pace, by its own
        clock, and one that took a snapshot holds none the sender had collected, with no log
        entry of its own going; once every one has pruned at the same time they hold the
        same, and stay in sync. A device whose clock was ahead collected some early: time
        first passes the window of those, as it would before the others collect them."""
        c = self.c
        c.time.now = max(c.time.now, c.collected.settled_at)
        for node in c.nodes:
            prune_device(c, node)
        TOTALS["rounds"] += c.sync_until_quiet(MAX_ROUNDS)

    def check_graphs_agree(self) -> None:
        """Converged devices answer every graph query alike: the listing and a traversal from
        each entity, both ways, as far as it goes."""
        answers = []
        for node in self.c.nodes:
            starts = [(e["type"], e["name"]) for e in graph.entity_rows(node.conn)]
            walks = [graph.traverse(node.conn, s, direction="both", hops=3) for s in starts]
            answers.append((graph.list_entities(node.conn, None, ()), walks))
        assert all(answer == answers[0] for answer in answers), "graph answers differ"


ConvergenceMachine.TestCase.settings = pytest_settings("convergence")
TestConvergence = ConvergenceMachine.TestCase
# Minutes of examples (over five on two busy cores): out of the fast lane, and a longer timeout.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]
