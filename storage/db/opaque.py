"""Rows of other schema versions in the tables: columns unknown here kept opaque (PROTOCOL §10).

A row that a newer node wrote may carry values of columns this node's schema does not have
(sync/unknown.py). They are stored with the row, in its ``opaque`` column, as a JSON array in
wire order (migration 0015): JSON, so that the migration which later adds such a column can
move its value out with SQLite's own functions (``opaque ->> '$[0]'``); every value is a plain
scalar, which JSON holds without loss (a real keeps its point: ``1.0``). The log keeps the
entry's bytes as they came, so what is relayed is exactly what arrived; the column serves the
row's digest, the export, and this node's own later writes of the row, which carry the
unknown values on (:func:`carry_unknown`) so that archiving a fact on an older device does
not wipe what a newer one wrote in it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from feral.sync.schema import TABLES, Table, Value
from feral.sync.types import NodeId, RowId
from feral.sync.unknown import split, wire_form

from .connection import Connection, schema_of

__all__ = ["bound_row", "carry_unknown", "decode", "encode", "wire_values"]

_Change = tuple[Table, RowId, tuple[Value, ...] | None]


def encode(values: Sequence[Value]) -> str | None:
    """The ``opaque`` column for these unknown values (``None``: there are none)."""
    return json.dumps(list(values), ensure_ascii=False) if values else None


def decode(stored: object) -> list[Value]:
    """The unknown values an ``opaque`` column holds, in wire order."""
    if not isinstance(stored, str):
        return []
    values: list[Value] = json.loads(stored)
    return values


def bound_row(table: Table, values: Sequence[Value], hlc: int, origin: NodeId) -> list[Value]:
    """The row bound to the upsert for a live row of another schema version: the known
    columns (left-out ones null), the clock fields, then the unknown values."""
    known, extra = split(table, values)
    return [*known, hlc, origin, 0, encode(extra)]


def wire_values(table: Table, known: Sequence[Value], stored: object) -> list[Value]:
    """A stored row as it travels: its known values, then its opaque ones (sync/unknown.py)."""
    return wire_form(table, known, decode(stored))


_HOLDS = {t.name: f'SELECT 1 FROM "{t.name}" WHERE opaque IS NOT NULL LIMIT 1' for t in TABLES}
"""Whether a table holds any row with unknown values: one probe of its partial index."""


def carry_unknown(conn: Connection, changes: Sequence[_Change]) -> list[_Change]:
    """``changes`` with each live row that ends before what its stored version holds (values
    of columns the writing code does not know) made to carry those values on.

    Only tables that can hold such values are read: one with a row that has unknown values
    (its partial index), or one the store's schema (:func:`schema_of`) widened: the writing
    code may know fewer columns than the store holds.
    """
    out = list(changes)
    for table in {c[0] for c in out if type(c) is tuple and len(c) == 3 and c[2] is not None}:
        if not isinstance(table, Table) or table.name not in _HOLDS:
            continue
        held_as = schema_of(conn).by_name(table.name)
        extended = held_as.base_count < len(held_as.columns)
        if not extended and conn.execute(_HOLDS[table.name]).fetchone() is None:
            continue
        stored = _stored_wire_rows(conn, held_as, [c[1] for c in out if c[0] is table])
        for index, (tbl, row_id, values) in enumerate(out):
            held = stored.get(row_id)
            if tbl is table and values is not None and held and len(held) > len(values):
                out[index] = (tbl, row_id, (*values, *held[len(values) :]))
    return out


def _stored_wire_rows(
    conn: Connection, table: Table, ids: list[RowId]
) -> dict[str, tuple[Value, ...]]:
    names = ", ".join(f'"{n}"' for n in table.column_names)
    query = (
        f'SELECT {names}, opaque FROM "{table.name}" WHERE deleted = 0 AND id IN '
        "(SELECT value FROM json_each(?))"
    )
    rows: dict[str, tuple[Value, ...]] = {}
    bools = [i for i, c in enumerate(table.columns) if c.kind == "bool"]
    for record in conn.execute(query, (json.dumps(ids),)):
        known = [bool(v) if i in bools and v is not None else v for i, v in enumerate(record[:-1])]
        wire = wire_values(table, known, record[-1])
        rows[str(record[0])] = tuple(wire)
    return rows
