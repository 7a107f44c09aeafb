"""The convergence oracle (DESIGN §4, a contract): every replicated row as sorted JSON Lines.

Each line is one row of one replicated table, tombstones included, with its clock fields
(``hlc``, ``origin``, ``deleted``) and no local-only field (no rowid, FTS or vector data). Lines
are ordered by table name, then id, and keys are sorted, so two nodes that have exchanged
everything write byte-identical exports; :func:`state_digest` is the SHA-256 of that text.

A row holding values of columns this node's schema does not know (a newer node wrote it,
storage/db/opaque.py) has them under ``_opaque``, in wire order: the export shows every value the
node holds and relays, though it cannot name them. Two nodes of the same schema version still
write the same export; a newer node names those values by their columns.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

from feral.storage.db import opaque
from feral.storage.db.connection import Connection, schema_of

from .memories import row_dict, select_sql

__all__ = ["export_lines", "state_digest"]


def export_lines(conn: Connection) -> Iterator[str]:
    """Yield the export one line at a time (each ends with a newline), in the columns of the
    store's schema (:func:`schema_of`)."""
    for table in sorted(schema_of(conn).tables, key=lambda t: t.name):
        query = select_sql(table).replace(" FROM ", ", opaque FROM ", 1)
        for record in conn.execute(f"{query} ORDER BY id"):
            row = row_dict(table, record[:-1])
            row.pop("tier", None)
            row["table"] = table.name
            if record[-1] is not None:
                row["_opaque"] = opaque.decode(record[-1])
            yield json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def state_digest(conn: Connection) -> str:
    """SHA-256 of the export: equal digests mean equal replicated state."""
    digest = hashlib.sha256()
    for line in export_lines(conn):
        digest.update(line.encode("utf-8"))
    return digest.hexdigest()
