"""Fixed scenarios: what a snapshot's receiver may drop (docs/REPLICATION.md §6, "Pruning and
snapshots"), and the tombstones devices collect at their own pace.

A snapshot lacks a row its receiver holds either because its sender collected the row's
tombstone or because the sender never held the row although its vector says it saw the write
(a hole: a database restored from an older copy writes again above what it lost, and a device
that takes a snapshot from it adopts its vector). Only the first may be dropped.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from feral.storage.memory import export, memories
from feral.sync.ids import fact_id

from .cluster import Cluster
from .simnode import SNAPSHOT_ABOVE, SimNode


def remember(node: SimNode, text: str) -> int:
    return node.commit(memories.remember_fact, (node.name, "wrote", text), now_ms=node.wall())


def tombstones(node: SimNode) -> list[str]:
    return [line for line in export.export_lines(node.conn) if '"deleted":true' in line]


@pytest.fixture
def trio() -> Iterator[Cluster]:
    cluster = Cluster(3, "mesh")
    yield cluster
    cluster.close()


def test_a_snapshot_from_a_device_that_adopted_a_hole_drops_no_tombstone(trio: Cluster) -> None:
    """The server is backed up, writes a fact and deletes it (the phone and the laptop take
    the tombstone), and is restored under its own id: its vector still covers the tombstone's
    stamp once it writes again, though it never held it. A new device caught up by a snapshot
    from it holds no row of that id and adopts its vector; it then sends the phone a snapshot
    (the phone lacks the server's newest write, below the new device's floor). Nobody
    collected the tombstone, so the phone keeps it, and sync brings it back to all."""
    server, phone, laptop = trio.nodes
    for i in range(SNAPSHOT_ABOVE + 1):
        remember(server, f"fact {i}")
    trio.sync_until_quiet(1_000)
    trio.backup(0)
    remember(server, "doomed")
    server.commit(memories.nuke, fact_id(server.name, "wrote", "doomed"))
    trio.sync_until_quiet(1_000)
    assert len(tombstones(phone)) == len(tombstones(laptop)) == 1
    trio.edges = []  # each link below is opened on its own
    trio.isolate(server)
    trio.restore(0, new_identity=False)
    remember(server, "after the restore")
    newcomer = trio.join(0)  # an empty device: caught up by a snapshot of the server's rows
    trio.sync_until_quiet(1_000)
    assert newcomer.vector() == server.vector() and not tombstones(newcomer)
    trio.isolate(server)
    trio.edges = [(3, 1)]  # the newcomer meets the phone first
    trio.sync_until_quiet(1_000)
    assert len(tombstones(phone)) == 1, "the phone dropped a tombstone nobody collected"
    trio.edges = [(0, 1), (0, 2), (1, 2), (3, 1)]
    trio.settle(1_000)
    trio.check_step()
    trio.check_converged()
    assert all(len(tombstones(node)) == 1 for node in trio.nodes)


def rows_of(node: SimNode) -> str:
    return "".join(export.export_lines(node.conn))


def test_an_erased_copy_of_a_write_whose_tombstone_was_collected_leaves_no_alarm() -> None:
    """Two devices write one fact at once; one of the others nukes it and the first is away
    past the window, so each device collects the tombstone at its own pace. A device that took
    the older write only after collecting the tombstone keeps its words; a peer that erased it
    sends it erased, and no tombstone ever comes to explain that: the row there had outgrown the
    write, so the copy is the same write, not a forgery. The steps the convergence machine
    found (shrunk from a CI run)."""
    from .test_convergence import ConvergenceMachine

    fact = ("alice", "likes", "tea")
    machine = ConvergenceMachine()
    machine.start(n=4, skews=[0, 0, 0, 60000, 0], topology="mesh", page_limit=1)
    machine.away_past_the_window(node=0)
    machine.write_newer_column(node=3, triple=fact, value="teal")
    machine.deliver(picks=[0])
    machine.write_on_two(node=0, other=3, triple=fact)
    machine.hard_delete(node=1, triple=fact)
    machine.away_past_the_window(node=0)
    machine.teardown()


def test_an_erased_copy_whose_row_a_snapshot_moves_past_leaves_no_alarm() -> None:
    """A new device takes the server's own write, then the server's erased copy of it (the
    phone nuked it): an alarm, the write being its row still. The tombstone never reaches it:
    a newer write outdated it, and a snapshot carries rows, not the entries between. The
    snapshot's newer row moves the row past the write, and the alarm goes. The steps the
    convergence machine found (seed 1846024705, shrunk)."""
    from .test_convergence import ConvergenceMachine

    fact = ("alice", "likes", "tea")
    machine = ConvergenceMachine()
    machine.start(n=3, skews=[0, 0, 0, 0, 0], topology="chain", page_limit=1)
    machine.new_device(sponsor=0)
    machine.bulk_write(node=1, triples=[fact] * 4)
    machine.boost_on_two(importance=0.5, node=0, other=1, triple=fact)
    machine.nuke_then_new_device(i=0, node=2)
    machine.away_past_the_window(node=0)
    machine.hard_delete(node=1, triple=fact)
    machine.relate_entities(node=4, other="Berlin", source="Berlin")
    machine.disk_fails(failures=None, node=0, passes=0, whole=False)
    machine.new_device(sponsor=0)
    machine.away_past_the_window(node=1)
    machine.boost_on_two(importance=0.5, node=2, other=1, triple=fact)
    machine.teardown()
