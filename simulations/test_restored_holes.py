"""Fixed scenarios: a device restored from an older copy of itself, whose log of its own writes
has a hole until sync brings the lost writes back (simulations/cluster.py's ``restore``)."""

from __future__ import annotations

from collections.abc import Callable

from .test_convergence import ConvergenceMachine


def test_a_restored_device_whose_own_log_was_pruned_may_hold_a_hole_until_sync() -> None:
    """The phone prunes its own log while the server is away, is copied, writes two more
    entries, is restored from the copy and writes again: above its floor it holds its new write
    but not the two lost ones, a hole by design that the next sync repairs. The per-step check
    waived such holes only for logs never pruned. The steps the convergence machine found (a
    CI run)."""
    machine = ConvergenceMachine()
    triple = ("alice", "likes", "tea")
    machine.first_facts(facts=[triple])
    machine.start(n=3, topology="chain", page_limit=1, skews=[0, 0, 0, 0, 0])
    steps: list[Callable[[], None]] = [
        lambda: machine.write(confidence=1.0, node=1, triple=triple),
        lambda: machine.away_past_the_window(node=0),
        lambda: machine.node_life(action="backup", node=1),
        lambda: machine.relate_entities(node=1, other="Berlin", source="Berlin"),
        lambda: machine.away_past_the_window(node=2),
        lambda: machine.node_life(action="restore", node=1),
        lambda: machine.name_entity(kind="place", name="Berlin", node=1),
    ]
    for step in steps:
        step()
        machine.safe()
    machine.teardown()
