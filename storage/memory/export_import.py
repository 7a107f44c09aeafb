"""The facts of an export, imported as they were: live ones live, archived ones archived.

An export's rows were classified on the device that made them, so ``feral memory import`` of
an export does not classify them again (the absorb pipeline would archive or merge rows the
export holds as they are). :func:`import_archived` writes the archived facts a home does not
hold at all, archived; a fact it holds already, in any state, is left as it is, so importing a
home's own export into it changes nothing. (The live facts go through
:func:`~feral.storage.memory.memories.import_facts`, which skips the live ones.)
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from feral.storage.db.connection import Connection
from feral.sync.ids import fact_id
from feral.sync.schema import FACTS
from feral.sync.types import NodeId, RowId

from .memories import Change, Stamp, commit_local

__all__ = ["import_archived"]


def import_archived(
    conn: Connection,
    origin: NodeId,
    stamp: Stamp,
    triples: Sequence[tuple[str, str, str]],
    *,
    now_ms: int,
) -> int:
    """Write, archived, each fact of ``triples`` this home has never held; returns how many."""
    wanted: dict[RowId, tuple[str, str, str]] = {}
    for subject, predicate, obj in triples:
        parts = (subject.strip(), predicate.strip(), obj.strip())
        wanted.setdefault(fact_id(*parts), parts)
    held = {
        str(row_id)
        for (row_id,) in conn.execute(
            "SELECT f.id FROM json_each(?) AS j CROSS JOIN facts AS f ON f.id = j.value",
            (json.dumps(list(wanted)),),
        )
    }
    changes: list[Change] = [
        (FACTS, row_id, (row_id, s, p, o, 1.0, None, now_ms, True))
        for row_id, (s, p, o) in wanted.items()
        if row_id not in held
    ]
    if changes:
        commit_local(conn, origin, stamp, changes)
    return len(changes)
