"""Typed edges between memories, a memory's history, and conflicting current values.

* :func:`link` writes a typed edge (storage/memory/memory_model.py's ``add_edge``: its id comes from
  its ends and type, so the same link made on two devices is one row).
* :func:`follow` reads a memory the way ``feral memory get ID --follow`` shows it: ``none``
  (the record), ``edges`` (and its live edges), ``full_history`` (and every version it
  superseded, following ``supersedes`` chains as far as they go, each version once).
* Conflicting current values are derived at read time, never stored: a single-valued slot
  (node/absorb/fact_rules.py) of one subject holding live values no write had seen together, such
  as two devices that each superseded Dr. Chen offline, one with Dr. Lee and one with Dr.
  Patel: storage/absorb/slot_conflicts.py's slot conflicts, which ``memory conflicts`` lists. Since
  every device derives them from the same replicated rows, they agree once they hold the same
  rows; one clears when one of the values is superseded or archived, or by ``resolve``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, cast

from feral.node.absorb.fact_rules import is_single_valued, slot
from feral.node.answers import EdgeRow, Followed, SlotConflict
from feral.storage.absorb.absorb_store import slot_rows
from feral.storage.absorb.slot_conflicts import conflicting_slots
from feral.storage.db.connection import Connection
from feral.storage.memory.memories import Row, find_row
from feral.storage.memory.memory_model import EDGE_TYPES, add_edge, edges_of
from feral.sync.errors import InvalidInput, NotFoundError
from feral.sync.ids import normalise
from feral.sync.types import NodeId

if TYPE_CHECKING:
    from feral.node.kernel import Kernel
    from feral.storage.memory.memories import Stamp

__all__ = ["FOLLOW_MODES", "Follow", "conflicting_values", "follow", "link", "read_followed"]

Follow = Literal["none", "edges", "full_history"]
FOLLOW_MODES: tuple[Follow, ...] = ("none", "edges", "full_history")


def _link_rows(
    conn: Connection,
    origin: NodeId,
    stamp: Stamp,
    edge_type: str,
    from_id: str,
    to_id: str,
    *,
    note: str,
    now_ms: int,
) -> Row:
    """Both ends must be stored memories (NotFoundError otherwise), then the edge is written."""
    find_row(conn, from_id)
    find_row(conn, to_id)
    return add_edge(conn, origin, stamp, edge_type, from_id, to_id, now_ms=now_ms, note=note)


async def link(node: Kernel, from_id: str, to_id: str, edge_type: str, note: str = "") -> EdgeRow:
    """Link two memories with a typed edge; the same link again writes nothing new.

    Raises:
        InvalidInput: an unknown type, or a memory linked to itself.
        NotFoundError: either end is not a stored memory.
        SecretRefused: the note holds what looks like a secret.
    """
    from feral.node.secrets.scan import refuse_secrets  # its patterns: on a link only

    if edge_type not in EDGE_TYPES:
        raise InvalidInput(f"unknown edge type {edge_type!r}; one of {', '.join(EDGE_TYPES)}")
    if from_id == to_id:
        raise InvalidInput("a memory cannot be linked to itself")
    refuse_secrets([note])
    edge = await node.write(_link_rows, edge_type, from_id, to_id, note=note, now_ms=node.now_ms())
    node.notify_changed()
    return cast(EdgeRow, edge)


def _slot_key(row: Row) -> tuple[str, str] | None:
    if "predicate" not in row:
        return None
    name = slot(str(row["predicate"]))
    return (normalise(str(row["subject"])), name) if is_single_valued(name) else None


def _current_values(conn: Connection, row: Row) -> list[Row]:
    """The live values of the single-valued slot ``row`` fills (empty for other memories)."""
    key = _slot_key(row)
    if key is None:
        return []
    predicates = [key[1], f"{key[1]}_name"]
    return slot_rows(conn, str(row["subject"]), predicates)


def _history(conn: Connection, memory_id: str) -> list[Row]:
    """Every version ``memory_id`` superseded, directly or down a chain, each once, nearest
    first; each carries ``superseded_by`` (the newer version whose edge led to it)."""
    seen = {memory_id}
    frontier = [memory_id]
    found: list[Row] = []
    while frontier:
        following: list[str] = []
        for newer in frontier:
            for edge in edges_of(conn, newer):
                older = str(edge["to_id"])
                if edge["type"] != "supersedes" or edge["from_id"] != newer or older in seen:
                    continue
                seen.add(older)
                try:
                    _, row = find_row(conn, older, live_only=False)
                except NotFoundError:  # hard-deleted since: the chain goes on past it
                    continue
                found.append({**row, "superseded_by": newer})
                following.append(older)
        frontier = following
    return found


def read_followed(conn: Connection, memory_id: str, mode: Follow) -> Followed:
    """``{"record", "edges"?, "history"?, "current_values", "conflicting"}`` (module docstring)."""
    _, record = find_row(conn, memory_id)
    current = _current_values(conn, record)
    result: dict[str, Any] = {"record": record}
    if mode != "none":
        result["edges"] = edges_of(conn, memory_id)
    if mode == "full_history":
        result["history"] = _history(conn, memory_id)
    key = _slot_key(record)
    result["current_values"] = [r["id"] for r in current]
    result["conflicting"] = key is not None and key in conflicting_slots(conn)
    return cast(Followed, result)  # built in the order the JSON has always had


async def follow(node: Kernel, memory_id: str, mode: Follow) -> Followed:
    """A memory with what ``mode`` follows (NotFoundError for an unknown id)."""
    if mode not in FOLLOW_MODES:
        raise InvalidInput(f"--follow must be one of {', '.join(FOLLOW_MODES)}")
    return await node.store.read(read_followed, memory_id, mode)


def conflicting_values(conn: Connection) -> list[SlotConflict]:
    """Every single-valued slot holding live values no write had seen together: ``{"subject",
    "predicate", "ids"}``, sorted, the same on every device holding the same rows (the slot
    conflicts of storage/absorb/slot_conflicts.py, which ``memory conflicts`` lists)."""
    return [
        {"subject": subject, "predicate": name, "ids": sorted(str(r["id"]) for r in rows)}
        for (subject, name), rows in conflicting_slots(conn).items()
    ]
