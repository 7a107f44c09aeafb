"""The conflict oracle: what each writer had seen, and the conflict records that must follow.

At every local write the simulator notes which versions of each written row the writer's log
held just before (:meth:`Sightings.note`): the ground truth of "had seen", closed over what
those versions' own writers had seen (a device that holds a version B wrote over A has seen A
through it, even before A's own entry reaches it). Once the cluster is quiet
(:func:`check_conflicts`):

- **no false conflict**: neither version of a record had been seen by the other's writer;
- **every concurrent pair reported**: two writes of a reported row neither of whose writers
  saw the other's meet where their histories part (the first write on each side after the
  version both share), and that pair has a record unless the rule's exceptions apply (a
  tombstone or erased side, two equal rows, a row that ends deleted, a write lost to a restore);
- **identical lists everywhere**, resolved ones included, and the same slot conflicts; an
  edit's values to choose between (each side's final write, sync/conflicts.py's
  ``branch_tips``) are read from the device's own log, so they must agree between devices
  whose logs hold the same entries of the row (a log pruned, or a device filled by a snapshot,
  holds fewer, and shows less: a known limit, docs/REPLICATION.md §4).

It reads the ledger's deltas (their priors) and the devices' databases, never the product's
rule: sync/conflicts.py is what is under test.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from feral.storage.absorb.conflicts import list_conflicts
from feral.sync.conflicts import CREATIONS_RACE, REPORTED_TABLES, conflict_id
from feral.sync.delta import Delta, Version
from feral.sync.schema import table_by_name

from .model import SimulationError
from .profiles import TOTALS

if TYPE_CHECKING:
    from .cluster import Cluster

__all__ = ["Sightings", "check_conflicts"]

Conn = Any
RowKey = tuple[str, str]


class Sightings:
    """For each local write of a reported row, the versions of that row its writer held."""

    def __init__(self) -> None:
        self.seen: dict[Version, frozenset[Version]] = {}

    def note(self, conn: Conn, deltas: Iterable[Delta]) -> None:
        """Right after a local commit: what the writer's log held of each row it wrote."""
        batch = [d for d in deltas if d.table in REPORTED_TABLES]
        issued = {d.version for d in batch}
        for delta in batch:
            code = table_by_name(delta.table).code
            held = {
                Version(int(hlc), origin)
                for origin, hlc in conn.execute(
                    "SELECT origin, hlc FROM delta_log WHERE tbl = ? AND row_id = ?",
                    (code, delta.row_id),
                )
            }
            earlier = {d.version for d in batch if d.row_id == delta.row_id and d.hlc < delta.hlc}
            self.seen[delta.version] = frozenset((held - issued) | earlier)

    def closure(
        self, version: Version, memo: dict[Version, frozenset[Version]]
    ) -> frozenset[Version]:
        """Everything ``version``'s writer had seen, directly or through what it had seen."""
        if version not in memo:
            memo[version] = frozenset()  # versions only see older ones: no cycle, but be safe
            direct = self.seen.get(version, frozenset())
            found = set(direct)
            for earlier in direct:
                found |= self.closure(earlier, memo)
            memo[version] = frozenset(found)
        return memo[version]


def check_conflicts(cluster: Cluster) -> None:
    """The three properties above, on a quiet cluster whose exports already agree."""
    lists = [list_conflicts(n.conn, include_resolved=True) for n in cluster.nodes]
    if any([_replicated(r) for r in listed] != [_replicated(r) for r in lists[0]]
           for listed in lists):  # fmt: skip
        raise SimulationError("conflict lists differ between devices")
    _check_choices(cluster, lists)
    memo: dict[Version, frozenset[Version]] = {}
    sightings: Sightings = cluster.sightings
    writes = {d.version: d for mine in cluster.ledger.entries.values() for d in mine.values()}
    records = [r for r in lists[0] if r["kind"] == "edit"]  # a slot's are derived from rows
    for record in records:
        a, b = (_parse(v) for v in record["parted"])
        if a in sightings.closure(b, memo) or b in sightings.closure(a, memo):
            raise SimulationError(
                f"false conflict on {record['table']} {record['row_id']}: "
                f"{record['versions']} were written one after the other"
            )
    recorded = {r["id"] for r in records}
    TOTALS["conflicts"] += len(recorded)
    conn = cluster.nodes[0].conn
    for missing in _expected_records(conn, writes, sightings, memo) - recorded:
        raise SimulationError(f"a concurrent pair was not reported (record {missing})")


_DERIVED = ("versions", "values", "live")
"""What a device shows from its own log and row: the rest of a record is replicated."""


def _replicated(record: Any) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in _DERIVED}


def _row_log(conn: Conn, table: str, row_id: str) -> list[Any]:
    code = table_by_name(table).code
    return sorted(
        conn.execute(
            "SELECT origin, hlc, payload IS NULL FROM delta_log WHERE tbl = ? AND row_id = ?",
            (code, row_id),
        ).fetchall()
    )


def _check_choices(cluster: Cluster, lists: list[list[Any]]) -> None:
    """Devices whose logs hold the same entries of a row show the same values to choose."""
    for i, listed in enumerate(lists[1:], 1):
        for mine, first in zip(listed, lists[0], strict=True):
            same_log = _row_log(cluster.nodes[i].conn, mine["table"], mine["row_id"]) == _row_log(
                cluster.nodes[0].conn, first["table"], first["row_id"]
            )
            if same_log and mine["versions"] != first["versions"]:
                raise SimulationError(f"conflict {mine['id']} shows other values on two devices")


def _parse(text: str) -> Version:
    hlc, _, origin = text.partition(":")
    return Version(int(hlc), origin)  # type: ignore[arg-type]


def _expected_records(
    conn: Conn,
    writes: dict[Version, Delta],
    sightings: Sightings,
    memo: dict[Version, frozenset[Version]],
) -> set[str]:
    """The ids of the records the concurrent pairs of every live reported row call for."""
    rows: dict[RowKey, list[Delta]] = {}
    for delta in writes.values():
        if delta.table in REPORTED_TABLES:
            rows.setdefault((delta.table, delta.row_id), []).append(delta)
    expected: set[str] = set()
    for (table, row_id), row_writes in rows.items():
        state = conn.execute(f'SELECT deleted FROM "{table}" WHERE id = ?', (row_id,)).fetchone()
        if state is None or state[0]:
            continue
        kept = _with_payload(conn, table, row_id)
        live = [d for d in row_writes if d.version in kept and d.values is not None]
        for i, x in enumerate(live):
            for y in live[i + 1 :]:
                if x.version in sightings.closure(y.version, memo):
                    continue
                if y.version in sightings.closure(x.version, memo):
                    continue
                pair = _parting(x, y, writes, kept)
                if pair is not None:
                    expected.add(conflict_id(table, row_id, *pair))
    return expected


def _with_payload(conn: Conn, table: str, row_id: str) -> set[Version]:
    code = table_by_name(table).code
    return {
        Version(int(hlc), origin)
        for origin, hlc in conn.execute(
            "SELECT origin, hlc FROM delta_log WHERE tbl = ? AND row_id = ? "
            "AND payload IS NOT NULL",
            (code, row_id),
        )
    }


def _parting(
    x: Delta, y: Delta, writes: dict[Version, Delta], kept: set[Version]
) -> tuple[Version, Version] | None:
    """The first write on each side after the version both histories share, if they hold
    different rows (two equal rows are nothing to choose), neither was erased by a nuke
    (``kept``: the entries the log holds with their words) and every step is known."""
    xs, ys = _ancestry(x, writes), _ancestry(y, writes)
    if xs is None or ys is None:
        return None  # a write on the way was lost to a restore from backup
    shared = set(xs) & set(ys)
    x_side = [v for v in xs if v not in shared]
    y_side = [v for v in ys if v not in shared]
    if not x_side or not y_side:
        return None
    first_x, first_y = writes[x_side[-1]], writes[y_side[-1]]
    if first_x.version not in kept or first_y.version not in kept:
        return None
    if first_x.values is None or first_y.values is None or first_x.values == first_y.values:
        return None
    if first_x.prior != first_y.prior:
        return None  # parted at a version lost to a restore: no common prior is known
    if first_x.prior is None and first_x.table not in CREATIONS_RACE:
        return None  # two first writes of a fact: one memory (sync/conflicts.py)
    return first_x.version, first_y.version


def _ancestry(delta: Delta, writes: dict[Version, Delta]) -> list[Version] | None:
    chain = [delta.version]
    current = delta.prior
    while current is not None:
        if current not in writes:
            return None
        chain.append(current)
        current = writes[current].prior
    return chain
