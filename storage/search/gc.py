"""Garbage collection of memories, by soft operations only: archive, consolidate, promote.

* **Stale session facts**: live facts in a ``session:ID`` scope whose meta row was last updated
  more than the TTL ago are archived (``restore`` brings one back).
* **Crowded groups**: more than ``compact_above`` live facts with the same subject and predicate
  (compared caseless) in one scope are consolidated into one new fact, ``subject / predicate /
  "obj1; obj2; ..."`` (the objects oldest first), and the originals archived behind
  ``consolidated`` edges from the new fact. Notes (predicate ``note``) are free text, not values
  of one attribute, and are never grouped. The new fact's id derives from its triple and the edge
  ids from their ends, so the same consolidation made on two devices is the same rows.
* **Distill**: a session's live facts are promoted to the user's scope
  (:func:`~feral.storage.memory.curation.promote_fact`).

A plan is read first (:func:`plan_gc`, :func:`plan_distill`): a dry run prints it and writes
nothing; a real run plans again inside its write transaction and applies that plan, so what is
applied is what the store held at that moment.
"""

from __future__ import annotations

from dataclasses import dataclass

from feral.storage.db.connection import Connection
from feral.storage.memory.curation import meta_of, promote_fact
from feral.storage.memory.memories import (
    Row,
    Stamp,
    remember_fact,
    row_dict,
    select_sql,
    set_archived,
)
from feral.storage.memory.memory_model import Meta, add_edge, write_meta
from feral.sync.schema import FACTS, MAX_TEXT_BYTES
from feral.sync.types import NodeId

from .ranking import DAY_MS

__all__ = ["Group", "GcPlan", "apply_distill", "apply_gc", "plan_distill", "plan_gc"]

SEPARATOR = "; "
NOTE_PREDICATE = "note"
_FACT_COLUMNS = ", ".join(f'f."{n}"' for n in (*FACTS.column_names, "hlc", "origin", "deleted"))
_SCOPE = "coalesce(nullif(m.scope, ''), 'user')"
_LIVE_FACTS = (
    f"SELECT {_FACT_COLUMNS}, {_SCOPE} FROM facts f "
    "LEFT JOIN memory_meta m ON m.id = f.id AND m.deleted = 0 "
    "WHERE f.deleted = 0 AND f.archived = 0"
)


@dataclass(frozen=True)
class Group:
    """Crowded facts of one subject, predicate and scope, and the fact that replaces them."""

    scope: str
    members: tuple[Row, ...]
    """Oldest first (by ``created_at``, then id): the order of the objects joined."""
    triple: tuple[str, str, str]


@dataclass(frozen=True)
class GcPlan:
    """What a ``gc`` archives and consolidates."""

    stale: tuple[Row, ...]
    groups: tuple[Group, ...]


def _fact(record: tuple[object, ...]) -> tuple[Row, str]:
    row = row_dict(FACTS, record[:-1])
    row["table"] = FACTS.name
    return row, str(record[-1])


def _stale(conn: Connection, cutoff_ms: int) -> list[Row]:
    records = conn.execute(
        f"{_LIVE_FACTS} AND m.scope LIKE 'session:%' AND m.updated_at < ? "
        "ORDER BY f.created_at, f.id",
        (cutoff_ms,),
    ).fetchall()
    return [_fact(tuple(r))[0] for r in records]


def _groups(conn: Connection, compact_above: int, skipped: set[str]) -> list[Group]:
    records = conn.execute(
        f"{_LIVE_FACTS} AND lower(f.predicate) != ? ORDER BY f.created_at, f.id", (NOTE_PREDICATE,)
    ).fetchall()
    by_key: dict[tuple[str, str, str], list[Row]] = {}
    for record in records:
        row, scope = _fact(tuple(record))
        if row["id"] not in skipped:
            key = (scope, row["subject"].casefold(), row["predicate"].casefold())
            by_key.setdefault(key, []).append(row)
    groups = []
    for (scope, _, _), rows in sorted(by_key.items()):
        members = _fitting(rows)
        if len(rows) > compact_above and len(members) > 1:
            objects = SEPARATOR.join(str(r["object"]) for r in members)
            triple = (str(members[0]["subject"]), str(members[0]["predicate"]), objects)
            groups.append(Group(scope, tuple(members), triple))
    return groups


def _fitting(rows: list[Row]) -> list[Row]:
    """The oldest rows whose objects, joined, fit in one text value."""
    size, kept = 0, []
    for row in rows:
        size += len(str(row["object"]).encode()) + len(SEPARATOR)
        if size > MAX_TEXT_BYTES:
            break
        kept.append(row)
    return kept


def plan_gc(conn: Connection, *, now_ms: int, ttl_days: int, compact_above: int) -> GcPlan:
    """What :func:`apply_gc` would do now."""
    stale = _stale(conn, now_ms - ttl_days * DAY_MS)
    groups = _groups(conn, compact_above, {str(r["id"]) for r in stale})
    return GcPlan(tuple(stale), tuple(groups))


def _consolidate(conn: Connection, origin: NodeId, stamp: Stamp, group: Group, now_ms: int) -> str:
    fact = remember_fact(conn, origin, stamp, group.triple, now_ms=now_ms)
    metas = [meta_of(conn, member) for member in group.members]
    categories = {m.category for m in metas}
    merged = Meta(
        str(fact["id"]),
        category=categories.pop() if len(categories) == 1 else "note",
        scope=group.scope,
        importance=max(m.importance for m in metas),
        updated_at=max(m.updated_at for m in metas),
    )
    write_meta(conn, origin, stamp, merged)
    for member in group.members:
        add_edge(conn, origin, stamp, "consolidated", str(fact["id"]), str(member["id"]),
                 now_ms=now_ms, note=f"gc: {len(group.members)} facts consolidated")  # fmt: skip
        set_archived(conn, origin, stamp, str(member["id"]), True)
    return str(fact["id"])


def apply_gc(
    conn: Connection, origin: NodeId, stamp: Stamp, *, now_ms: int, ttl_days: int,
    compact_above: int,
) -> tuple[GcPlan, list[str]]:  # fmt: skip
    """Archive the stale session facts and consolidate the crowded groups; returns the plan
    applied and the id of each group's consolidated fact."""
    plan = plan_gc(conn, now_ms=now_ms, ttl_days=ttl_days, compact_above=compact_above)
    for row in plan.stale:
        set_archived(conn, origin, stamp, str(row["id"]), True)
    made = [_consolidate(conn, origin, stamp, group, now_ms) for group in plan.groups]
    return plan, made


def plan_distill(conn: Connection, scope: str) -> list[Row]:
    """The live facts of a scope, oldest first: what :func:`apply_distill` promotes."""
    records = conn.execute(
        f"{select_sql(FACTS)} WHERE deleted = 0 AND archived = 0 AND id IN "
        "(SELECT id FROM memory_meta WHERE scope = ? AND deleted = 0) ORDER BY created_at, id",
        (scope,),
    ).fetchall()
    rows = [row_dict(FACTS, r) for r in records]
    for row in rows:
        row["table"] = FACTS.name
    return rows


def apply_distill(
    conn: Connection, origin: NodeId, stamp: Stamp, scope: str, *, now_ms: int
) -> list[Row]:
    """Promote every live fact of ``scope`` to the user's; returns the facts promoted."""
    rows = plan_distill(conn, scope)
    for row in rows:
        promote_fact(conn, origin, stamp, row, now_ms=now_ms)
    return rows
