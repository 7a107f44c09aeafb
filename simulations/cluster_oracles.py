"""The simulation's oracles: what must hold after every step, and once the cluster is quiet.

Kept apart from simulations/cluster.py, which runs the devices and the network: these only read
a :class:`~simulations.cluster.Cluster` (its devices, ledger and secrets) and raise
:class:`SimulationError` with every problem found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feral.storage.log import delta_log, row_digest, snapshot
from feral.storage.memory import export
from feral.sync.types import NodeId

from .conflict_oracle import check_conflicts
from .faults import status_beyond_held
from .forgery import alarms_between_honest_devices
from .model import SimulationError, log_stamps, log_summary, store_records, words_kept_after_nuke
from .nuking import erased_words_held
from .pruning import above_floors, expected_after_pruning
from .simnode import SimNode

if TYPE_CHECKING:
    from .cluster import Cluster

__all__ = ["check_converged", "check_step"]


def check_step(cluster: Cluster) -> None:
    """Safety after every step: clocks never go back, vectors claim only what is logged
    (as a gap-free prefix of each origin's writes), the log's entry counts are true, no
    log keeps the words of a nuked row, and no stamp beyond the window was applied."""
    problems = list(cluster.ledger.problems)
    for node in cluster.nodes:
        problems += node.problems
        vector = node.vector()
        mark = max(vector.values(), default=0)
        if mark < node.high_water:
            problems.append(f"{node.name}'s high-water mark went back to {mark}")
        node.high_water = mark
        if kept := words_kept_after_nuke(node.conn):
            problems.append(f"{node.name}'s log keeps the words of {kept} nuked entries")
        problems += erased_words_held(node, cluster.secrets)
        summary = log_summary(node.conn)
        counts = delta_log.log_entry_counts(node.conn)
        floors = snapshot.log_floors(node.conn)
        unpruned = {o: c for o, c in counts.items() if o not in floors}
        if unpruned != {origin: count for origin, (count, _) in summary.items()
                        if origin not in floors}:  # fmt: skip
            problems.append(f"{node.name}'s entry counts {counts} differ from its log")
        for origin, hlc in vector.items():
            if origin in floors:
                problems += _pruned_origin(cluster, node, origin, hlc, floors[origin])
                continue
            count, top = summary.get(origin, (0, 0))
            want = sum(1 for h in cluster.ledger.stamps(origin) if h <= hlc)
            if origin in cluster.holes_allowed:
                want = count  # a hole by design until sync repairs it (see Cluster.restore)
            if top != hlc or count != want:
                problems.append(
                    f"{node.name}'s vector says {origin[:6]}@{hlc}, its log holds {count} "
                    f"entries up to {top}; the origin wrote {want} up to {hlc}"
                )
    problems += status_beyond_held(cluster.nodes, cluster.holes_allowed)
    if problems:
        raise SimulationError("\n".join(problems))


def _pruned_origin(
    cluster: Cluster, node: SimNode, origin: NodeId, hlc: int, floor: int
) -> list[str]:
    """An origin whose log this node pruned (or took from a snapshot): its log holds exactly
    the origin's writes above the floor, up to its vector, and its count is of them all. An
    origin restored from a backup under its own id may lack some of them until sync repairs
    the hole (Cluster.restore), whether or not its log was pruned: what it holds is still
    only what the origin wrote."""
    held = [h for h in log_stamps(node.conn).get(origin, []) if h > floor]
    wrote = [h for h in cluster.ledger.stamps(origin) if floor < h <= hlc]
    count = delta_log.log_entry_counts(node.conn).get(origin, 0)
    want = sum(1 for h in cluster.ledger.stamps(origin) if h <= hlc)
    holes = origin in cluster.holes_allowed
    complete = held == wrote or (holes and set(held) <= set(wrote))
    if not complete or (count != want and not holes):
        return [
            f"{node.name} holds {len(held)} entries of {origin[:6]} above its floor {floor} "
            f"(the origin wrote {len(wrote)} up to {hlc}), counts {count} of {want}"
        ]
    return []


def check_converged(cluster: Cluster) -> None:
    """After quiescence: equal vectors, byte-identical exports, every row its LWW winner,
    every log every write, row digests equal and equal to the digest computed afresh
    (the one kept write by write, through repairs, nukes and restores, is right), and no
    integrity alarm but the forger's (an honest one may be raised for a while: see
    storage/log/erase.py's ``_WITHDRAW_ALARMS``)."""
    first = cluster.nodes[0]
    lines = list(export.export_lines(first.conn))
    rows_only = cluster.ledger.rows_only
    logged = {o: [h for h in cluster.ledger.stamps(o) if (o, h) not in rows_only]
              for o in cluster.ledger.entries}  # fmt: skip
    stamps = {o: hs for o, hs in logged.items() if hs}
    for node in cluster.nodes:
        if node.vector() != first.vector():
            raise SimulationError(f"vectors differ: {node.name} vs {first.name}")
        if list(export.export_lines(node.conn)) != lines:
            raise SimulationError(f"exports differ: {node.name} vs {first.name}")
        records = store_records(node.conn)
        expected = expected_after_pruning(cluster, records)
        if records != expected:
            wrong = sorted(k for k in records.keys() | expected.keys()
                           if records.get(k) != expected.get(k))  # fmt: skip
            detail = "; ".join(
                f"{k[1]}: holds {records.get(k)}, LWW winner {expected.get(k)}" for k in wrong
            )
            raise SimulationError(f"{node.name} does not hold the LWW winners: {detail}")
        if above_floors(node, log_stamps(node.conn)) != above_floors(node, stamps):
            raise SimulationError(f"{node.name}'s log differs from every write made")
        _check_digests(node, first)
        if alarms := alarms_between_honest_devices(node):
            raise SimulationError("\n".join(alarms))  # in sync means no alarm
    check_conflicts(cluster)


def _check_digests(node: SimNode, first: SimNode) -> None:
    kept = row_digest.row_digest(node.conn)
    if kept != row_digest.computed_afresh(node.conn):
        raise SimulationError(f"{node.name}'s kept row digest differs from its rows")
    if kept != row_digest.row_digest(first.conn):
        raise SimulationError(f"row digests differ: {node.name} vs {first.name}")
