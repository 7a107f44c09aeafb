"""Conflicts of a slot: one subject's single-valued slot holding several live values.

A device that learns a new value of a single-valued slot (storage/memory/slot_rules.py) supersedes
the one it holds, so one device alone never leaves two. Two devices apart that each set the slot
(each superseding the same doctor, one with Dr. Lee and one with Dr. Patel) leave two live facts
that no write had seen together: rows with ids of their own, so no row forked and no conflict record
was written (storage/absorb/conflicts.py). These conflicts are derived when read from the replicated
rows, never stored, so every device holding the same rows lists the same ones; a slot conflict ends
when one value is left, by ``resolve`` or by any write that supersedes or archives the others.

Two values one write had seen together are no conflict: a device that holds both and links
them (``remember --keep-both`` writes a new value beside the stored one, linked by an edge)
chose to keep both. So two live values of a slot conflict unless a live edge joins them, and a
slot conflict lists each value that conflicts with another.

Resolving keeps one value: each other value is archived and linked from the kept one by a
``supersedes`` edge, as the absorb pipeline supersedes, in one local write.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import TYPE_CHECKING

from feral.storage.db.connection import Connection
from feral.storage.memory.memories import Row, Stamp, set_archived
from feral.storage.memory.memory_model import add_edge, edges_of
from feral.storage.memory.slot_rules import FAVOURITE_PREFIX, SINGLE_VALUED, is_single_valued, slot
from feral.sync.conflicts import parse_version, version_text
from feral.sync.delta import Version
from feral.sync.errors import NotFoundError
from feral.sync.ids import normalise
from feral.sync.schema import FACTS
from feral.sync.types import NodeId

from .absorb_store import facts_in_slots

if TYPE_CHECKING:
    from .conflicts import ConflictRow

__all__ = ["SLOT_PREFIX", "conflicting_slots", "resolve_slot", "slot_conflicts"]

SLOT_PREFIX = "s"
"""A slot conflict's id starts with it (a record's with ``c``): ``resolve`` tells them apart."""
_PREDICATES = sorted(SINGLE_VALUED | {f"{name}_name" for name in SINGLE_VALUED})


def _version(row: Row) -> Version:
    return Version(int(row["hlc"]), NodeId(str(row["origin"])))


def _said(row: Row) -> str:
    """A value as the slot compares it: case and white space do not matter."""
    return " ".join(str(row["object"]).split()).casefold()


def _slot_id(subject: str, name: str) -> str:
    key = f"{FACTS.name}\x1f{subject}\x1f{name}"
    return SLOT_PREFIX + hashlib.sha256(key.encode("utf-8")).hexdigest()[:31]


def _shown(subject: str, name: str, rows: list[Row]) -> ConflictRow:
    ordered = sorted(rows, key=_version)
    return {
        "id": _slot_id(subject, name),
        "kind": "slot",
        "table": FACTS.name,
        "row_id": str(ordered[0]["id"]),
        "slot": f"{subject} {name}",
        "prior": "",
        "parted": [],
        "versions": [version_text(_version(r)) for r in ordered],
        "values": [{c: r[c] for c in FACTS.column_names} for r in ordered],
        "live": "",
        "detected_at": max(_version(r).hlc for r in ordered) >> 16,
        "resolved": False,
        "kept": "",
        "resolved_at": 0,
    }


def _slots(conn: Connection) -> dict[tuple[str, str], dict[str, Row]]:
    """Each single-valued slot's live values: ``{(subject, slot): {value: oldest row}}``."""
    groups: dict[tuple[str, str], dict[str, Row]] = defaultdict(dict)
    for row in facts_in_slots(conn, _PREDICATES, FAVOURITE_PREFIX):
        name = slot(str(row["predicate"]))
        if is_single_valued(name):
            values = groups[(normalise(str(row["subject"])), name)]
            held = values.get(_said(row))
            if held is None or _version(row) < _version(held):
                values[_said(row)] = row
    return groups


def _unlinked(conn: Connection, rows: list[Row]) -> list[Row]:
    """The values no edge joins to at least one other value of the slot."""
    ids = {str(r["id"]) for r in rows}
    linked = {
        frozenset((str(e["from_id"]), str(e["to_id"])))
        for row_id in ids
        for e in edges_of(conn, row_id)
        if {e["from_id"], e["to_id"]} <= ids
    }
    return [
        r
        for r in rows
        if any(frozenset((str(r["id"]), str(o["id"]))) not in linked for o in rows if o is not r)
    ]


def conflicting_slots(conn: Connection) -> dict[tuple[str, str], list[Row]]:
    """Each slot whose values conflict: the values that do, by subject and slot name."""
    found = {}
    for key, values in sorted(_slots(conn).items()):
        if len(values) > 1 and len(unlinked := _unlinked(conn, list(values.values()))) > 1:
            found[key] = unlinked
    return found


def slot_conflicts(conn: Connection) -> list[ConflictRow]:
    """Every single-valued slot of one subject holding live values no write had seen together,
    each value once (its oldest row), by subject and slot: the same list on every device."""
    found = conflicting_slots(conn)
    return [_shown(subject, name, rows) for (subject, name), rows in found.items()]


def resolve_slot(
    conn: Connection, origin: NodeId, stamp: Stamp, conflict: str, keep: str, *, now_ms: int
) -> ConflictRow:
    """Keep the value of version ``keep``: every other live value of the slot archived and
    superseded by it, in the caller's one transaction.

    Raises:
        NotFoundError: no slot holds several values under this id, or ``keep`` is not one of
            the versions listed.
    """
    groups = conflicting_slots(conn)
    by_id = {_slot_id(*key): key for key in groups}
    if conflict not in by_id:
        raise NotFoundError(f"no conflict with id {conflict!r}")
    subject, name = by_id[conflict]
    shown = _shown(subject, name, groups[(subject, name)])
    wanted = version_text(parse_version(keep))
    if wanted not in shown["versions"]:
        raise NotFoundError(
            f"{keep!r} is not a version of conflict {conflict!r}: "
            f"one of {', '.join(shown['versions'])}"
        )
    kept = shown["values"][shown["versions"].index(wanted)]
    others = {_said(r) for r in shown["values"]} - {_said(kept)}
    for row in facts_in_slots(conn, _PREDICATES, FAVOURITE_PREFIX):
        in_slot = (normalise(str(row["subject"])), slot(str(row["predicate"]))) == (subject, name)
        if in_slot and _said(row) in others:
            set_archived(conn, origin, stamp, str(row["id"]), True)
            add_edge(
                conn, origin, stamp, "supersedes", str(kept["id"]), str(row["id"]), now_ms=now_ms
            )
    return {**shown, "resolved": True, "kept": wanted, "resolved_at": now_ms}
