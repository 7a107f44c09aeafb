"""N simulated devices on a simulated network, and the convergence loop (DESIGN §7).

:meth:`Cluster.sync_until_quiet` is automerge's ``sync()`` loop for a mesh: heal everything,
(re)connect every link of the topology, deliver frames round by round, and stop once every session
of every link is quiet with nothing in flight. It fails after ``max_rounds`` (automerge's
``MAX_ITER``), so a livelock is a failure, not a hang. A link that is neither quiet nor carrying
frames is stalled; the node's no-progress timeout (node/links/peer.py) closes it, and so does this
loop.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from itertools import combinations
from pathlib import Path

from feral.storage.log import delta_log, snapshot
from feral.sync.hlc import COUNTER_BITS
from feral.sync.types import NodeId

from .cluster_oracles import check_converged, check_step
from .conflict_oracle import Sightings
from .files import remove_database, scratch_directory, template_database
from .keys import FakeKeys, fingerprint
from .model import Ledger, SimulationError, log_stamps, store_records
from .network import Link, ManualClock, SimNetwork, SimTime
from .nuking import Secrets
from .pruning import Collected
from .simnode import SimNode

__all__ = [
    "NAMES",
    "TOPOLOGIES",
    "Cluster",
    "SimulationError",
    "edges_for",
    "scratch_directory",
    "template_database",
]

NAMES = ("server", "phone", "laptop", "tablet", "watch")
TOPOLOGIES = ("chain", "star", "mesh")


MAX_IDLE_CONNECTIONS = 50
"""Reconnections ``sync_until_quiet`` allows with no delta applied before calling it a livelock."""


def edges_for(topology: str, n: int) -> list[tuple[int, int]]:
    """The links of a topology over nodes ``0..n-1`` (node 0 is the server).

    ``chain`` is phone—server—laptop—tablet—watch (the phone and the laptop never meet);
    ``star`` has the server in the middle; ``mesh`` links every pair.
    """
    if topology == "chain":
        order = [i for i in (1, 0, 2, 3, 4) if i < n]
        return list(zip(order, order[1:], strict=False))
    if topology == "star":
        return [(0, i) for i in range(1, n)]
    if topology == "mesh":
        return list(combinations(range(n), 2))
    raise ValueError(f"unknown topology {topology!r}")


class Cluster:
    """The devices, the links of the topology between them, the network and the oracle."""

    def __init__(self, n: int, topology: str, page_limit: int = 1000) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="feral-sim-", dir=scratch_directory()))
        self.keys = FakeKeys()
        self.time = SimTime()
        self.network = SimNetwork()
        self.ledger = Ledger()
        self.sightings = Sightings()
        self.stats: Counter[str] = Counter()
        self.page_limit = page_limit
        self.topology = topology
        self.nodes = [self._new_node(NAMES[i]) for i in range(n)]
        self.edges = edges_for(topology, n)
        self.backups: dict[int, Path] = {}
        self.holes_allowed: set[NodeId] = set()
        """Origins restored from a backup under their own id: their logs may have holes."""
        self.identities = 0
        self.joined = 0
        self.secrets = Secrets()
        self.collected = Collected()
        """The tombstones the devices' prunes collected (simulations/pruning.py)."""
        """Facts with words of their own, to look for after a nuke (simulations/nuking.py)."""

    def _new_node(self, name: str) -> SimNode:
        path = self.directory / f"{name}.db"
        shutil.copyfile(template_database(), path)
        return SimNode(self, name, self.keys.new(name), path, ManualClock(self.time))

    def join(self, sponsor: int) -> SimNode:
        """A brand-new device joins: paired with every member (pairing is by id), and linked
        with ``sponsor``, the device its first catch-up comes from."""
        self.joined += 1
        node = self._new_node(f"new{self.joined}")
        self.nodes.append(node)
        self.edges.append((len(self.nodes) - 1, sponsor))
        self.connect(node, self.nodes[sponsor])
        self.stats["joins"] += 1
        return node

    def close(self) -> None:
        for node in self.nodes:
            node.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    # -- trust (injected into every session) ---------------------------------------------------

    def is_paired(self, node_id: NodeId) -> bool:
        """Every current member of the cluster is paired with every other (pairing is by id)."""
        return any(node.node_id == node_id for node in self.nodes)

    @staticmethod
    def fingerprint(public_key: bytes) -> NodeId:
        return fingerprint(public_key)

    def node(self, node_id: NodeId) -> SimNode:
        return next(node for node in self.nodes if node.node_id == node_id)

    def ends(self, edge: int) -> tuple[SimNode, SimNode]:
        a, b = self.edges[edge]
        return self.nodes[a], self.nodes[b]

    # -- connections ---------------------------------------------------------------------------

    def connect(self, a: SimNode, b: SimNode) -> None:
        """Open a WebSocket between ``a`` and ``b``: a fresh session on each side."""
        self.network.open(a.node_id, b.node_id)
        a.open_link(b.node_id, self.page_limit, dialled=True)
        b.open_link(a.node_id, self.page_limit, dialled=False)
        self.stats["connections"] += 1
        a.pump(b.node_id)
        b.pump(a.node_id)

    def disconnect(self, a: SimNode, b: SimNode) -> None:
        """The connection ends: both sessions see end-of-file; queued frames are lost."""
        for x, y in ((a, b), (b, a)):
            link = x.links.pop(y.node_id, None)
            if link is not None:
                link.session.receive_eof()
        self.network.close(a.node_id, b.node_id)

    def connected(self, a: SimNode, b: SimNode) -> bool:
        return self.network.connection(a.node_id, b.node_id) is not None

    def can_connect(self, edge: int) -> bool:
        a, b = self.ends(edge)
        key = tuple(sorted((a.node_id, b.node_id)))
        return not self.connected(a, b) and key not in self.network.partitioned

    def deliver(self, link: Link) -> None:
        """Deliver the oldest frame of one direction to the receiving session."""
        frame = self.network.pop(link)
        sender, receiver = self.node(link[0]), self.node(link[1])
        if frame is None:  # EOF
            self.disconnect(sender, receiver)
            return
        receiver.links[sender.node_id].session.receive_frame(frame)
        receiver.pump(sender.node_id)

    def deliver_rounds(self, rounds: int) -> None:
        """Deliver one frame per busy direction, ``rounds`` times (no reconnecting)."""
        for _ in range(rounds):
            for link in self.network.busy_links():
                if link in self.network.busy_links():
                    self.deliver(link)

    def reset(self, edge: int) -> None:
        """Faithful loss: the connection breaks; everything in flight on it is lost."""
        self.disconnect(*self.ends(edge))
        self.stats["resets"] += 1

    def partition(self, edge: int) -> None:
        a, b = self.ends(edge)
        self.disconnect(a, b)
        self.network.partition(a.node_id, b.node_id)

    def heal(self, edge: int) -> None:
        a, b = self.ends(edge)
        self.network.heal(a.node_id, b.node_id)

    def isolate(self, node: SimNode) -> None:
        for peer_id in list(node.links):
            self.disconnect(node, self.node(peer_id))

    # -- node life -----------------------------------------------------------------------------

    def restart(self, i: int) -> None:
        """Stop node ``i`` (its connections drop, its clock and sessions are forgotten) and
        start it again on the same database file."""
        node = self.nodes[i]
        self.isolate(node)
        node.close()
        node.open()
        self.stats["restarts"] += 1

    def backup(self, i: int) -> None:
        """Copy node ``i``'s database to a backup file (a consistent copy, as a backup tool
        makes one)."""
        target = self.directory / f"{self.nodes[i].name}.backup"
        target.unlink(missing_ok=True)
        self.nodes[i].conn.execute("VACUUM INTO ?", (str(target),))
        self.backups[i] = target

    def restore(self, i: int, *, new_identity: bool) -> None:
        """Replace node ``i``'s database with its backup and restart it.

        With ``new_identity`` the device also takes a new key and node id, and is paired anew
        with every device (the recovery TEST-CATALOG 17 allows). Without it, the per-step check
        that its log of its own writes is gap-free is waived for this device (the product
        repairs such holes during sync); the final convergence check still applies in full.
        Writes that no node holds any more are lost by design; the ledger forgets them.
        """
        node = self.nodes[i]
        self.isolate(node)
        node.close()
        remove_database(node.path)
        shutil.copyfile(self.backups[i], node.path)
        if new_identity:
            self.identities += 1
            node.keys = self.keys.new(f"{node.name}#{self.identities}")
        else:
            # Writes it makes before sync brings its lost ones back leave a hole below its own
            # vector entry; the link handler (storage/link/handler.py) finds it by entry counts and
            # repairs it.
            self.holes_allowed.add(node.node_id)
        node.open()
        node.high_water = 0  # a restore may lower the mark: that is what it does
        for member in self.nodes:  # the backup may hold words nuked since: they may spread
            member.erased_words = frozenset()
        surviving = {(o, h) for n in self.nodes for o, hs in log_stamps(n.conn).items() for h in hs}
        floors = [snapshot.log_floors(n.conn) for n in self.nodes]  # pruned entries were held
        surviving |= {(o, h) for o, h in self.ledger.all_stamps()
                      if h <= max((f.get(o, 0) for f in floors), default=0)}  # fmt: skip
        # A write held only as a row (a snapshot page whose final page never came) survives too.
        held = {(r[2], r[1]) for n in self.nodes for r in store_records(n.conn).values()}
        self.ledger.rows_only |= held - surviving
        surviving |= held
        self.ledger.keep_only(surviving)
        self.stats["restores"] += 1

    # -- the loop ------------------------------------------------------------------------------

    def sync_until_quiet(self, max_rounds: int) -> int:
        """Heal, reconnect and deliver until every link is quiet; returns the rounds it took.

        Raises:
            SimulationError: still not quiet after ``max_rounds`` rounds, or links keep
                reconnecting (more than :data:`MAX_IDLE_CONNECTIONS`) with nothing applied.
        """
        mark = (self.stats["deltas_applied"], self.stats["connections"])
        for rounds in range(max_rounds):
            if self.run_round():
                self.stats["max_rounds"] = max(self.stats["max_rounds"], rounds)
                return rounds
            if self.stats["deltas_applied"] != mark[0]:
                mark = (self.stats["deltas_applied"], self.stats["connections"])
            elif self.stats["connections"] - mark[1] > MAX_IDLE_CONNECTIONS:
                raise SimulationError(f"livelock: links keep failing and reconnecting with "
                                      f"nothing applied:\n{self.describe()}")  # fmt: skip
        raise SimulationError(f"not quiet after {max_rounds} rounds:\n{self.describe()}")

    def settle(self, max_rounds: int, passes: int = 3) -> int:
        """``sync_until_quiet``, then anti-entropy on every link (``feral serve`` re-sends each
        link's vector every few minutes, which is how a peer hears a newer ``CaughtUp``) and
        sync again, until a pass changes nothing (at most ``passes``). Returns the rounds."""
        rounds = self.sync_until_quiet(max_rounds)
        for _ in range(passes):
            before = self._held()
            self.anti_entropy()
            rounds += self.sync_until_quiet(max_rounds)
            if self._held() == before:
                break
        return rounds

    def pass_the_newest_stamp(self) -> None:
        """Let the shared time reach the newest stamp any device holds, then tick anti-entropy:
        what a sender held back for a peer's slower clock (sync/held_back.py: stamps within
        twice the window of the receiver, less a margin for the clock estimate) is sent now, as
        ``feral serve``'s next anti-entropy tick sends it once that much real time has passed."""
        newest = max((max(n.vector().values(), default=0) for n in self.nodes), default=0)
        self.time.now = max(self.time.now, newest >> COUNTER_BITS)
        self.anti_entropy()

    def anti_entropy(self) -> None:
        """Every link re-sends its vector, as ``feral serve`` does every minute: how entries a
        peer held back (stamped beyond twice the window of this clock) come once time passed."""
        for node in self.nodes:
            for peer in list(node.links):
                node.anti_entropy(peer)

    def _held(self) -> list[tuple[object, object]]:
        return [(n.vector(), delta_log.log_entry_counts(n.conn)) for n in self.nodes]

    def run_rounds(self, rounds: int) -> None:
        """Run up to ``rounds`` rounds, whether or not the links go quiet."""
        for _ in range(rounds):
            if self.run_round():
                return

    def run_round(self) -> bool:
        """Heal, connect every closed link, deliver one frame per busy direction; time out a
        stalled link. Returns whether everything was quiet already."""
        self.network.heal_all()
        for edge in range(len(self.edges)):
            if self.can_connect(edge):
                self.connect(*self.ends(edge))
        if self.network.busy_links():
            self.deliver_rounds(1)
            return False
        if self.all_quiet():
            return True
        self._time_out_stalled()
        return False

    def all_quiet(self) -> bool:
        for edge in range(len(self.edges)):
            a, b = self.ends(edge)
            ab, ba = a.session(b.node_id), b.session(a.node_id)
            if ab is None or ba is None or not (ab.quiet and ba.quiet):
                return False
        return not self.network.busy_links()

    def _time_out_stalled(self) -> None:
        """The no-progress timeout (node/links/peer.py): a link that is not quiet and carries no
        frames is closed, and reconnected in the next round."""
        for edge in range(len(self.edges)):
            a, b = self.ends(edge)
            ab, ba = a.session(b.node_id), b.session(a.node_id)
            if ab is not None and ba is not None and not (ab.quiet and ba.quiet):
                self.disconnect(a, b)
                self.stats["timeouts"] += 1

    def describe(self) -> str:
        lines = []
        for a, b in (self.ends(e) for e in range(len(self.edges))):
            for x, y in ((a, b), (b, a)):
                session = x.session(y.node_id)
                state = "no session" if session is None else session.state.name
                quiet = session is not None and session.quiet
                error = x.last_error.get(y.node_id, "-")
                lines.append(f"  {x.name}->{y.name}: {state} quiet={quiet} last error: {error}")
        return "\n".join(lines)

    # -- oracles (simulations/cluster_oracles.py) ----------------------------------------------

    def check_step(self) -> None:
        """Safety after every step (:func:`~simulations.cluster_oracles.check_step`)."""
        check_step(self)

    def check_converged(self) -> None:
        """After quiescence, convergence (:func:`~simulations.cluster_oracles.check_converged`)."""
        check_converged(self)
