"""Fixed scenarios on the simulated cluster: the catalogue cases the machines find only rarely.

Each is a few lines of the same rules the machines use, so a failing machine seed can be
turned into one of these once it is understood.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from feral.storage.link import peers as peer_status
from feral.storage.log import delta_log, row_digest
from feral.storage.memory import export, memories
from feral.storage.store import run_write
from feral.sync.delta import Delta, Page
from feral.sync.hlc import COUNTER_BITS
from feral.sync.ids import fact_id

from .cluster import Cluster
from .forgery import FORGED_ROW
from .model import store_records
from .simnode import MAX_SKEW_MS, SimNode
from .test_convergence import ConvergenceMachine

HOUR_MS = 3_600_000


@pytest.fixture
def chain() -> Iterator[Cluster]:
    """phone—server—laptop: the phone and the laptop never meet."""
    cluster = Cluster(3, "chain", page_limit=2)
    yield cluster
    cluster.close()


@pytest.fixture
def pair() -> Iterator[Cluster]:
    cluster = Cluster(2, "chain")
    yield cluster
    cluster.close()


def remember(node: SimNode, text: str) -> int:
    return node.commit(memories.remember_fact, (node.name, "wrote", text), now_ms=node.wall())


def assert_converged(cluster: Cluster) -> None:
    cluster.settle(1_000)
    cluster.check_step()
    cluster.check_converged()


def rows(node: SimNode) -> int:
    return len(list(export.export_lines(node.conn)))


def test_writes_relay_through_the_server_to_a_device_that_never_meets_the_writer(
    chain: Cluster,
) -> None:
    server, phone, laptop = chain.nodes
    for i in range(5):
        remember(phone, f"offline edit {i}")
        remember(laptop, f"offline edit {i}")
    assert_converged(chain)
    assert rows(laptop) == rows(phone) == 10


def test_each_device_records_the_rows_it_sent_and_received_per_peer(chain: Cluster) -> None:
    """The status a node keeps of each peer, written by the same link handler as the node's.

    Received counts the rows a peer's pages added here; sent counts the deltas the peer
    acknowledged, which may include some it turned out to hold already: never fewer."""
    server, phone, laptop = chain.nodes
    for i in range(3):
        remember(phone, f"phone {i}")
    remember(laptop, "laptop")
    assert_converged(chain)
    at_server = peer_status.peer_statuses(server.conn)
    at_phone = peer_status.peer_statuses(phone.conn)[server.node_id]
    at_laptop = peer_status.peer_statuses(laptop.conn)[server.node_id]
    assert at_server[phone.node_id]["rows_received"] == 3 == at_laptop["rows_received"]
    assert at_server[laptop.node_id]["rows_received"] == 1 == at_phone["rows_received"]
    assert at_phone["rows_sent"] >= 3 and at_laptop["rows_sent"] >= 1
    assert (
        at_server[phone.node_id]["rows_sent"] >= 1 and at_server[laptop.node_id]["rows_sent"] >= 3
    )
    assert phone.node_id not in peer_status.peer_statuses(laptop.conn)  # they never meet


def test_a_clock_an_hour_ahead_is_refused_until_wall_time_reaches_its_stamps(
    chain: Cluster,
) -> None:
    """TEST-CATALOG 13, and the recovery it asks to be defined: the writer's stamps (and, by
    the HLC, every stamp it makes after them) are held back from its peers, which name it
    (docs/REPLICATION.md §7), until their clocks come within twice the window of them; the other
    devices keep syncing meanwhile."""
    server, phone, laptop = chain.nodes
    phone.wall.skew_ms = HOUR_MS
    remember(phone, "from the future")
    phone.wall.skew_ms = 0
    remember(phone, "after the clock was corrected")
    remember(laptop, "laptop, meanwhile")
    chain.run_rounds(200)
    told = peer_status.peer_statuses(server.conn)[phone.node_id]["last_error"]
    assert told is not None and "clock skew" in told and phone.node_id[:8] in told
    assert rows(server) == rows(laptop) == 1 and rows(phone) == 3
    chain.check_step()  # refused pages moved nothing: no vector entry without its log entry
    chain.time.advance(HOUR_MS - MAX_SKEW_MS)
    assert_converged(chain)


def test_a_restart_with_the_clock_set_back_still_stamps_above_the_stored_mark(
    pair: Cluster,
) -> None:
    """TEST-CATALOG 16: the stored high-water mark, not the wall clock, is the floor."""
    server, phone = pair.nodes
    remember(phone, "before the restart")
    mark = max(phone.vector().values())
    pair.restart(1)
    phone.wall.skew_ms = -10 * 60_000
    remember(phone, "after the restart")
    assert max(phone.vector().values()) > mark
    phone.wall.skew_ms = 0  # ten minutes is beyond the window: the handshake would refuse
    assert_converged(pair)


def test_a_database_restored_under_a_new_node_id_converges(pair: Cluster) -> None:
    """TEST-CATALOG 17's other way out: the restored device takes a new id; its old id's
    writes come back from its peers like any relayed origin."""
    server, phone = pair.nodes
    remember(phone, "before the backup")
    assert_converged(pair)
    pair.backup(1)
    remember(phone, "after the backup")
    assert_converged(pair)
    pair.restore(1, new_identity=True)
    remember(phone, "after the restore")
    assert_converged(pair)
    assert rows(server) == 3


def _restore_same_id(pair: Cluster) -> tuple[SimNode, SimNode]:
    server, phone = pair.nodes
    remember(phone, "before the backup")
    assert_converged(pair)
    pair.backup(1)
    return server, phone


def test_a_restored_database_never_reuses_a_stamp_of_a_write_it_lost(pair: Cluster) -> None:
    """TEST-CATALOG 17 under the same node id, with the clock standing still. Resumed from the
    copy's mark, the new write would take the lost one's (hlc, origin), each side would keep
    its own, and both would think they are in step. The mark kept beside the database (which
    the restore does not touch) lifts the new write above it."""
    server, phone = _restore_same_id(pair)
    remember(phone, "after the backup")  # stamped in the same millisecond: counter + 1
    assert_converged(pair)
    lost = phone.mark
    pair.restore(1, new_identity=False)
    remember(phone, "after the restore")
    assert phone.mark > lost
    assert_converged(pair)


def test_a_restored_database_whose_new_writes_balance_its_losses_still_converges(
    pair: Cluster,
) -> None:
    """Lost: A1 and A2 (A2 stamped while the phone's clock ran a minute fast, within the
    window). Had the new write N been stamped between them, the phone would take A2 back
    (above its vector), the server would never ask for N (below its vector), the phone would
    never get A1: equal vectors, equal entry counts, different rows. N lands above A2, so the
    server ends up with more of the phone's entries than the phone, and the phone repairs."""
    server, phone = _restore_same_id(pair)
    pair.time.advance(1_000)
    remember(phone, "A1")
    phone.wall.skew_ms = 60_000
    remember(phone, "A2")
    phone.wall.skew_ms = 0
    assert_converged(pair)
    pair.restore(1, new_identity=False)
    pair.time.advance(1_000)
    remember(phone, "N")
    assert_converged(pair)
    assert rows(phone) == rows(server) == 4


def test_the_same_scenario_twice_gives_the_same_replicas() -> None:
    """TEST-CATALOG 35: nothing hidden (random ids, wall time, set order) changes a run."""

    def run() -> tuple[list[str], int, int]:
        cluster = Cluster(3, "mesh", page_limit=1)
        try:
            for node in cluster.nodes:
                node.wall.skew_ms = len(node.name)
                remember(node, "shared fact")
                cluster.time.advance(1)
            cluster.sync_until_quiet(1_000)
            newest = max(delta_log.clock_high_water(n.conn) for n in cluster.nodes)
            lines = list(export.export_lines(cluster.nodes[0].conn))
            return lines, newest >> COUNTER_BITS, cluster.network.frames_sent
        finally:
            cluster.close()

    assert run() == run()


def _restored_with_a_hole(cluster: Cluster, i: int) -> SimNode:
    """Node ``i`` writes, is backed up, writes what it will lose (its peer takes it), is
    restored under its own id and writes again: its own origin now has a hole."""
    node = cluster.nodes[i]
    for n in range(5):
        remember(node, f"before the backup {n}")
    assert_converged(cluster)
    cluster.backup(i)
    remember(node, "lost by the restore")
    assert_converged(cluster)
    cluster.restore(i, new_identity=False)
    cluster.time.advance(1_000)
    remember(node, "after the restore")
    return node


@pytest.mark.parametrize("restored", [0, 1], ids=["accepting side", "dialling side"])
def test_the_first_round_after_a_restore_finds_the_hole_and_repairs_it(
    pair: Cluster, restored: int
) -> None:
    """Issue 11, findings 3 and 10: the link is quiet only once both sides hold the same, so
    one round (no anti-entropy) repairs the hole, on whichever side of the link it is."""
    _restored_with_a_hole(pair, restored)
    pair.sync_until_quiet(1_000)
    pair.check_step()
    pair.check_converged()
    assert pair.stats["repairs"] == 1
    assert not any("log_diverged" in e for n in pair.nodes for e in n.last_error.values())


def test_anti_entropy_in_the_middle_of_a_repair_does_not_cancel_it() -> None:
    """Issue 11, finding 4: both ends re-send their vectors, round after round, while the
    restored phone takes its own origin back one delta a page; the repair still completes."""
    cluster = Cluster(2, "chain", page_limit=1)
    try:
        server, phone = cluster.nodes
        _restored_with_a_hole(cluster, 1)
        cluster.connect(phone, server)
        ticks = 0
        for _ in range(2_000):
            link = phone.links.get(server.node_id)
            if link is None:  # the link failed
                break
            busy = bool(cluster.network.busy_links())
            if link.holes.repairing:  # asked for, or streaming
                phone.anti_entropy(server.node_id)
                server.anti_entropy(phone.node_id)
                ticks += 1
            elif ticks and not busy:
                break
            elif not busy:  # nothing found yet: a vector re-checks the counts
                phone.anti_entropy(server.node_id)
            cluster.deliver_rounds(1)
        assert ticks >= 3, "the repair ended before anti-entropy could meet it"
        assert cluster.stats["failed_log_diverged"] == 0, phone.last_error
        cluster.sync_until_quiet(1_000)
        cluster.check_step()
        cluster.check_converged()
    finally:
        cluster.close()


def test_a_forged_entry_that_arrives_first_leaves_equal_vectors_reported_as_divergence(
    pair: Cluster,
) -> None:
    """A paired device forges the laptop's next entry and the server takes it before the real
    one: both then hold the laptop's log up to the same stamp with the same count, and the
    real entry never travels. Vectors and counts agree; the row digests in CaughtUp do not,
    so each side records the divergence and neither may be reported in sync."""
    server, laptop = pair.nodes
    remember(laptop, "what the laptop really wrote")
    hlc = laptop.vector()[laptop.node_id]
    values = (FORGED_ROW, "forged", "says", "not what was written", 0.25, None, 1, False)
    forged = Delta("facts", FORGED_ROW, hlc, laptop.node_id, values)
    held = server.vector().get(laptop.node_id, 0)
    now = max(server.wall(), hlc >> COUNTER_BITS)
    run_write(server.conn, delta_log.apply_page, Page(laptop.node_id, held, (forged,)),
              now_ms=now, max_skew_ms=MAX_SKEW_MS)  # fmt: skip
    pair.settle(1_000)
    assert server.vector() == laptop.vector()
    assert delta_log.log_entry_counts(server.conn) == delta_log.log_entry_counts(laptop.conn)
    assert export.state_digest(server.conn) != export.state_digest(laptop.conn)
    for node, peer in ((server, laptop), (laptop, server)):
        seen = peer_status.peer_statuses(node.conn)[peer.node_id]
        assert seen["digest_vector"] is not None, node.name
        assert peer_status.diverged(
            node.vector(), delta_log.log_entry_counts(node.conn), row_digest.row_digest(node.conn),
            seen["digest_vector"], seen["entries"], seen["digest"],
        ), node.name  # fmt: skip


def test_a_full_disk_drops_the_links_says_so_once_and_sync_resumes_once_it_clears(
    chain: Cluster,
) -> None:
    server, phone, laptop = chain.nodes
    chain.sync_until_quiet(1_000)
    server.faults.set(passes=0, failures=None, whole=True)
    remember(phone, "written while the server's disk is full")
    chain.run_rounds(200)  # every reconnect fails the same way
    chain.check_step()
    assert chain.stats["links_failed_storage"] > 2
    # the one link that carries a write (the phone's) fails on every reconnect: said once
    assert chain.stats["failure_lines"] == 1
    assert laptop.vector().get(phone.node_id) is None
    told = peer_status.peer_statuses(phone.conn)[server.node_id]["last_error"]
    assert told is not None and "disk is full" in told
    server.faults.clear()
    chain.sync_until_quiet(1_000)
    chain.check_converged()
    assert rows(laptop) == 1


def test_a_device_that_joins_after_a_nuke_never_holds_the_words(pair: Cluster) -> None:
    server, phone = pair.nodes
    pair.secrets.remember(phone)
    pair.sync_until_quiet(1_000)
    pair.secrets.nuke(server, 0)
    pair.sync_until_quiet(1_000)
    tablet = pair.secrets.join(pair, 0)
    assert tablet.erased_words
    assert_converged(pair)
    (record,) = store_records(tablet.conn).values()
    assert record[3]  # the row arrived as its tombstone
    assert not tablet.problems


def carry(cluster: Cluster, *pairs: tuple[SimNode, SimNode]) -> None:
    """Deliver frames on the links between these pairs only, until none is left on them."""
    links = {(a.node_id, b.node_id) for x, y in pairs for a, b in ((x, y), (y, x))}
    while busy := [link for link in cluster.network.busy_links() if link in links]:
        for link in busy:
            if link in cluster.network.busy_links():  # a refusal may have closed the link
                cluster.deliver(link)


def test_a_copy_from_before_a_nuke_raises_no_alarm_once_the_row_is_written_again() -> None:
    """The laptop streams the phone's write to the server, which meanwhile took it from the
    phone, nuked it and remembered it again: the laptop's copy still holds the words the
    server erased, and is the same write, not a forgery."""
    cluster = Cluster(3, "mesh")
    try:
        server, phone, laptop = cluster.nodes
        for edge in range(len(cluster.edges)):
            cluster.reset(edge)
        fact = ("alice", "likes", "tea")
        phone.commit(memories.remember_fact, fact, now_ms=phone.wall())
        cluster.connect(server, laptop)
        carry(cluster, (server, laptop))
        cluster.connect(phone, laptop)
        carry(cluster, (phone, laptop))  # the laptop queues the write for the server
        cluster.connect(phone, server)
        carry(cluster, (phone, server))
        server.commit(memories.nuke, fact_id(*fact))
        cluster.time.advance(10)
        server.commit(memories.remember_fact, ("Alice", "likes", "tea"), now_ms=server.wall())
        carry(cluster, (server, laptop))
        assert_converged(cluster)  # and no integrity alarm between honest devices
    finally:
        cluster.close()


def test_a_write_echoed_back_erased_before_its_tombstone_leaves_no_alarm() -> None:
    """The server nukes the phone's write and streams it back to the phone erased, ahead of its
    tombstone (pages go origin by origin): an alarm for a while, none once it is quiet. The
    steps the convergence machine found (seed 929346389)."""
    machine = ConvergenceMachine()
    fact = ("alice", "likes", "tea")
    machine.start(n=2, topology="chain", page_limit=1, skews=[0] * 5)
    machine.deliver(picks=[0, 2, 0, 0])
    machine.write(node=1, triple=fact, confidence=1.0)
    machine.deliver(picks=[0] * 7)
    machine.hard_delete(node=0, triple=fact)
    machine.deliver(picks=[0])
    machine.teardown()


def test_an_erased_echo_then_a_newer_write_then_its_tombstone_leave_no_alarm() -> None:
    """The nuker streams the writer's entry back erased, ahead of its tombstone; before the
    tombstone arrives, a third device that had not heard of the nuke archives the row and the
    writer takes that first. The tombstone, outdated by the archive, still explains the erased
    copy: no alarm once quiet (one stayed for good), and the writer's words are erased too."""
    cluster = Cluster(3, "mesh", page_limit=1)
    try:
        writer, laptop, nuker = sorted(cluster.nodes, key=lambda node: node.node_id)
        for edge in range(len(cluster.edges)):
            cluster.reset(edge)
        cluster.connect(writer, nuker)
        cluster.connect(writer, laptop)
        carry(cluster, (writer, nuker), (writer, laptop))
        fact = ("alice", "likes", "tea")
        writer.commit(memories.remember_fact, fact, now_ms=writer.wall())
        carry(cluster, (writer, nuker), (writer, laptop))
        nuker.commit(memories.nuke, fact_id(*fact))
        cluster.time.advance(10)
        laptop.commit(memories.set_archived, fact_id(*fact), True)
        echo = (nuker.node_id, writer.node_id)
        while echo in cluster.network.busy_links() and not alarms(writer):
            cluster.deliver(echo)
        assert alarms(writer)  # the erased copy came first
        carry(cluster, (writer, laptop))
        assert_converged(cluster)  # and no integrity alarm between honest devices
        kept = writer.conn.execute(
            "SELECT count(*) FROM delta_log WHERE origin = ? AND payload IS NOT NULL",
            (writer.node_id,),
        ).fetchone()[0]
        assert kept == 0
    finally:
        cluster.close()


def alarms(node: SimNode) -> int:
    return int(node.conn.execute("SELECT count(*) FROM integrity_alarms").fetchone()[0])


def test_entries_stamped_beyond_twice_the_window_are_held_back_without_blocking_the_others() -> (
    None
):
    """A device wrote while its clock (and the relay's) ran an hour ahead, then both were
    corrected. The relay streams a third device its entries with every other origin's: those
    beyond twice the window of the receiver's clock are held back, named in its status, while
    the rest arrives (the whole stream was refused, for every origin, while they were in it);
    they arrive once its clock comes within twice the window of them."""
    cluster = Cluster(4, "star")
    try:
        relay = cluster.nodes[0]
        writer, other, receiver = sorted(cluster.nodes[1:], key=lambda node: node.node_id)
        for edge in range(len(cluster.edges)):
            cluster.reset(edge)
        writer.wall.skew_ms = relay.wall.skew_ms = HOUR_MS
        cluster.connect(writer, relay)
        remember(writer, "while the clock ran ahead")
        carry(cluster, (writer, relay))
        writer.wall.skew_ms = relay.wall.skew_ms = 0
        remember(other, "on time")
        remember(relay, "on time too")
        cluster.connect(other, relay)
        carry(cluster, (other, relay))
        cluster.connect(receiver, relay)
        carry(cluster, (receiver, relay))
        assert rows(receiver) == 2  # the other's write and the relay's, not the writer's
        assert cluster.stats["page_refused_clock_skew"] == 0
        told = peer_status.peer_statuses(receiver.conn)[relay.node_id]["last_error"]
        assert told is not None and "clock skew" in told and writer.node_id[:8] in told
        cluster.check_step()
        cluster.time.advance(HOUR_MS - MAX_SKEW_MS)
        assert_converged(cluster)
        assert rows(receiver) == 3
    finally:
        cluster.close()
