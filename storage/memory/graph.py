"""The entity graph, read from the same rows as everything else: entities and facts.

An entity is a row of ``entities`` (a type and a display name; its id is derived from the type and
the normalised name, so naming it on two devices makes one row). Its *attributes* are the live
facts whose subject names it (by normalised name) and whose object names no entity; a *relation*
is a live fact whose subject and object both name entities. There is no second store to drift
from the facts: archiving a fact removes the attribute or the relation, on every device.

A fact names an entity by its normalised name only, whatever the entity's type, so a fact about
"Jordan" relates every entity called Jordan (a person and a place alike).

Traversal is breadth-first, bounded by hops and by a number of results, and visits each entity
once (so cycles end); neighbours are taken in one order that depends only on the rows (predicate,
direction, type, normalised name, fact id), so two devices holding the same rows answer alike.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from feral.storage.db.connection import Connection
from feral.storage.db.rows import FactRow
from feral.sync.errors import NotFoundError
from feral.sync.ids import entity_id, normalise
from feral.sync.schema import ENTITIES, FACTS
from feral.sync.types import NodeId

from .graph_limits import MAX_HOPS, MAX_RESULTS, Direction
from .memories import Row, Stamp, remember_fact, row_dict, select_sql, writable_id
from .memory_model import add_entity

__all__ = [
    "MAX_HOPS",
    "MAX_RESULTS",
    "Direction",
    "Graph",
    "entity_rows",
    "facts_where",
    "list_entities",
    "live_facts",
    "relate",
    "traverse",
]


def relate(
    conn: Connection,
    origin: NodeId,
    stamp: Stamp,
    source: tuple[str, str],
    predicate: str,
    target: tuple[str, str],
    *,
    now_ms: int,
) -> FactRow:
    """Name both entities (``(type, name)``) and remember the fact that relates them, at once."""
    for entity_type, name in (source, target):
        add_entity(conn, origin, stamp, entity_type, name, now_ms=now_ms)
    return remember_fact(conn, origin, stamp, (source[1], predicate, target[1]), now_ms=now_ms)


def entity_rows(conn: Connection, entity_type: str | None = None) -> list[Row]:
    """Live entities in one order everywhere: by type, normalised name, then id."""
    where = "deleted = 0 AND archived = 0" + (" AND type = ?" if entity_type else "")
    params = (normalise(entity_type),) if entity_type else ()
    records = conn.execute(f"{select_sql(ENTITIES)} WHERE {where}", params).fetchall()
    rows = [row_dict(ENTITIES, r) for r in records]
    rows.sort(key=lambda r: (r["type"], normalise(r["name"]), r["id"]))
    return rows


_LIVE = "deleted = 0 AND archived = 0"


def live_facts(conn: Connection) -> list[Row]:
    """Every live fact's id, subject, predicate and object, in id order: all a graph needs (a
    whole row costs about twice as much to read, for columns no traversal looks at)."""
    records = conn.execute(f"SELECT id, subject, predicate, object FROM facts WHERE {_LIVE}")
    ordered = sorted(records.fetchall(), key=lambda r: str(r[0]))  # see facts_where
    return [{"id": r[0], "subject": r[1], "predicate": r[2], "object": r[3]} for r in ordered]


def facts_where(conn: Connection, column: str, names: Collection[str]) -> list[Row]:
    """Whole live facts whose ``column`` (``subject`` or ``predicate``) is one of ``names``
    (normalised), in id order.

    SQLite's ``NOCASE`` folds ASCII only, so the match in SQL is a sieve and :func:`normalise`
    decides: a name that differs from a stored one in more than ASCII case or spacing inside is
    not found (stored text is stripped; the phrasing rules write predicates lower-case).
    """
    if column not in ("subject", "predicate"):
        raise ValueError(f"facts are looked up by subject or predicate, not {column!r}")
    wanted = set(names)
    if not wanted:
        return []
    records = conn.execute(
        f"{select_sql(FACTS)} WHERE {column} COLLATE NOCASE IN "
        f"(SELECT value FROM json_each(?)) AND {_LIVE}",
        (json.dumps(sorted(wanted)),),
    ).fetchall()
    # Sorted here, not by ORDER BY id: that walks the id index and looks every row up, about
    # ten times slower than the plain scan for the handful of rows that match.
    rows = sorted((row_dict(FACTS, r) for r in records), key=lambda row: str(row["id"]))
    return [row for row in rows if normalise(row[column]) in wanted]


@dataclass(frozen=True)
class Graph:
    """Entities by normalised name, and the live facts by the normalised name at each end, read
    in one pass (so a listing or a traversal never compares every fact with every entity)."""

    by_name: dict[str, list[Row]]
    by_end: dict[str, dict[str, list[Row]]]
    """``{"subject" | "object": {normalised name: facts, in id order}}``."""

    @classmethod
    def read(cls, conn: Connection) -> Graph:
        by_name: dict[str, list[Row]] = {}
        for entity in entity_rows(conn):
            by_name.setdefault(normalise(entity["name"]), []).append(entity)
        by_end: dict[str, dict[str, list[Row]]] = {"subject": {}, "object": {}}
        for fact in live_facts(conn):
            for end, facts in by_end.items():
                facts.setdefault(normalise(fact[end]), []).append(fact)
        return cls(by_name, by_end)

    def names(self, fact: Row, end: str) -> list[Row]:
        """The entities that ``fact``'s subject or object (``end``) names."""
        return self.by_name.get(normalise(fact[end]), [])

    def touching(self, name: str, end: str) -> list[Row]:
        """The facts whose ``end`` is the normalised ``name``."""
        return self.by_end[end].get(name, [])

    def attributes(self, name: str) -> list[Row]:
        return [f for f in self.touching(name, "subject") if not self.names(f, "object")]

    def relation_count(self, name: str) -> int:
        """How many relations (facts naming an entity at both ends) ``name`` takes part in."""
        ids = {f["id"] for f in self.touching(name, "subject") if self.names(f, "object")}
        ids |= {f["id"] for f in self.touching(name, "object") if self.names(f, "subject")}
        return len(ids)


def list_entities(
    conn: Connection, entity_type: str | None, single_valued: Collection[str]
) -> list[Row]:
    """Each live entity with its attributes (``{predicate: [values]}``, every live value kept),
    how many relations it takes part in, and which single-valued attributes hold more than one
    value (``conflicting``): two devices that each set a doctor both stay visible."""
    graph = Graph.read(conn)
    listed = []
    for entity in entity_rows(conn, entity_type):
        name = normalise(entity["name"])
        attributes: dict[str, list[str]] = {}
        for fact in graph.attributes(name):
            attributes.setdefault(normalise(fact["predicate"]), []).append(fact["object"])
        for values in attributes.values():
            values.sort(key=normalise)
        conflicting = sorted(p for p, v in attributes.items() if p in single_valued and len(v) > 1)
        listed.append(
            {
                "id": entity["id"],
                "type": entity["type"],
                "name": entity["name"],
                "attributes": dict(sorted(attributes.items())),
                "relations": graph.relation_count(name),
                "conflicting": conflicting,
            }
        )
    return listed


def _neighbours(
    graph: Graph, entity: Row, relations: Collection[str] | None, direction: Direction
) -> list[tuple[Row, Row, str]]:
    """``(neighbour, fact, direction)`` for each relation of ``entity``, in the one order."""
    name = normalise(entity["name"])
    found: list[tuple[Row, Row, str]] = []
    ends = {"outbound": ("subject", "object"), "inbound": ("object", "subject")}
    ways = ("outbound", "inbound") if direction == "both" else (direction,)
    for way in ways:
        near, far = ends[way]
        for fact in graph.touching(name, near):
            if relations is not None and normalise(fact["predicate"]) not in relations:
                continue
            found.extend((other, fact, way) for other in graph.names(fact, far))
    found.sort(
        key=lambda f: (
            normalise(f[1]["predicate"]),
            f[2],
            f[0]["type"],
            normalise(f[0]["name"]),
            f[1]["id"],
        )
    )
    return found


def traverse(
    conn: Connection,
    start: tuple[str, str],
    *,
    relations: Collection[str] | None = None,
    direction: Direction = "outbound",
    hops: int = 1,
    limit: int = MAX_RESULTS,
) -> list[Row]:
    """The entities reachable from ``start`` (``(type, name)``) within ``hops`` relations.

    Each reached entity comes once, at its fewest hops, with the relation it was reached by
    (``via``: the fact, its direction and the entity it came from), in breadth-first order.

    Raises:
        NotFoundError: no live entity ``start``.
        ValueError: ``hops`` outside 1 to :data:`MAX_HOPS`.
    """
    if not 1 <= hops <= MAX_HOPS:
        raise ValueError(f"hops must be from 1 to {MAX_HOPS}, got {hops}")
    graph = Graph.read(conn)
    origin_id = writable_id(conn, ENTITIES, entity_id(*start))
    named = graph.by_name.get(normalise(start[1]), [])
    first = next((e for e in named if e["id"] == origin_id), None)
    if first is None:
        raise NotFoundError(f"no entity {start[0]}:{start[1]}")
    return _breadth_first(graph, first, relations, direction, hops, limit)


def _breadth_first(
    graph: Graph,
    first: Row,
    relations: Collection[str] | None,
    direction: Direction,
    hops: int,
    limit: int,
) -> list[Row]:
    seen = {first["id"]}
    frontier: Sequence[Row] = [first]
    reached: list[Row] = []
    for depth in range(1, hops + 1):
        following: list[Row] = []
        for entity in frontier:
            for other, fact, way in _neighbours(graph, entity, relations, direction):
                if other["id"] in seen:
                    continue
                seen.add(other["id"])
                following.append(other)
                reached.append(_reached(other, fact, way, entity, depth))
                if len(reached) >= limit:
                    return reached
        frontier = following
    return reached


def _reached(entity: Row, fact: Row, way: str, parent: Row, depth: int) -> Row:
    return {
        "id": entity["id"],
        "type": entity["type"],
        "name": entity["name"],
        "hops": depth,
        "via": {
            "fact_id": fact["id"],
            "subject": fact["subject"],
            "predicate": fact["predicate"],
            "object": fact["object"],
            "direction": way,
            "from": parent["id"],
        },
    }
