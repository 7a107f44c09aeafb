"""A snapshot whose final page never came, from a device restored since: its rows must spread.

The convergence machine found it (CI profile): the server writes, a new device starts taking a
snapshot from it and the link ends before the final page; the server is then restored from an
older copy under a new id. The new device now holds the server's later writes as rows that no
log holds any more (its vector never rose over them), so a replay of the log can never carry
them, and every device said "in sync" by vectors and counts while their rows differed. Both
ends of such a link find the rows differ at equal holdings; the one that asks for everything
must then be answered with a snapshot (storage/link/snapshot_link.py), which carries every row.
"""

from __future__ import annotations

from .test_convergence import ConvergenceMachine

Steps = list[tuple[str, dict[str, object]]]


def run_steps(steps: Steps, *, honest_refusals: int | None = None) -> None:
    """Run a shrunk program of the convergence machine's rules, its invariant after each
    step, then its final convergence (as its teardown does); with ``honest_refusals``, also
    check how many honest snapshots were refused as unsolicited (simulations/simnode.py)."""
    state = ConvergenceMachine()
    try:
        for name, arguments in steps:
            getattr(state, name)(**arguments)
            state.safe()
        state.converge()
        if honest_refusals is not None:
            assert state.c.stats["honest_snapshot_refusals"] == honest_refusals
    finally:
        state.c.close()


def test_rows_held_only_from_an_unfinished_snapshot_reach_every_device() -> None:
    tea, coffee = ("alice", "likes", "tea"), ("alice", "likes", "coffee")
    run_steps(
        [
            ("start", {"topology": "chain", "page_limit": 1, "n": 2, "skews": [0, 0, 0, 0, 0]}),
            ("away_past_the_window", {"node": 0}),
            ("link", {"a": tea, "b": tea, "edge_type": "supersedes", "node": 0, "note": ""}),
            ("node_life", {"action": "restore-as-new", "node": 0}),  # no copy yet: takes one
            ("write_newer_column", {"node": 0, "triple": tea, "value": "teal"}),
            ("boost", {"category": "preference", "importance": 1.0, "node": 0, "triple": tea}),
            ("link", {"a": tea, "b": tea, "edge_type": "related_to", "node": 0, "note": ""}),
            ("away_past_the_window", {"node": 0}),
            ("new_device", {"sponsor": 0}),
            ("relate_entities", {"node": 0, "other": "Berlin", "source": "Berlin"}),
            ("write_on_two", {"node": 0, "other": 1, "triple": coffee}),
            ("away_past_the_window", {"node": 4}),
            ("node_life", {"action": "restore-as-new", "node": 0}),
        ]
    )


def test_a_link_asks_for_everything_again_when_the_rows_differ_anew() -> None:
    """The same, where the restored server takes the new device's rows while its own snapshot
    to the phone is in flight: the phone's snapshot mended one difference and a new one came
    (a row the phone wrote at the very stamp the lost server wrote it, which the lost server's
    write wins). The link used to ask for everything once, and stayed diverged; it now asks
    again whenever the two digests differ from those it last asked about."""
    tea, coffee = ("alice", "likes", "tea"), ("bob", "knows", "coffee")
    run_steps(
        [
            ("start", {"n": 2, "page_limit": 1, "skews": [0, 0, 0, 0, 0], "topology": "chain"}),
            ("link", {"a": tea, "b": tea, "edge_type": "supersedes", "node": 0, "note": ""}),
            ("node_life", {"action": "restore-as-new", "node": 0}),  # no copy yet: takes one
            ("write_newer_column", {"node": 0, "triple": tea, "value": "teal"}),
            ("boost", {"category": "preference", "importance": 1.0, "node": 0, "triple": tea}),
            ("link", {"a": tea, "b": tea, "edge_type": "related_to", "node": 0, "note": ""}),
            ("boost", {"category": "identity", "importance": 2.0, "node": 1, "triple": tea}),
            ("write", {"confidence": 1.0, "node": 3, "triple": tea}),
            ("new_device", {"sponsor": 0}),
            ("relate_entities", {"node": 0, "other": "berlin", "source": "Berlin"}),
            ("write_on_two", {"node": 3, "other": 1, "triple": coffee}),
            ("away_past_the_window", {"node": 4}),
            ("node_life", {"action": "restore-as-new", "node": 0}),
        ]
    )
