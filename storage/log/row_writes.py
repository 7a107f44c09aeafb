"""The statements that write rows of a replicated schema: the guarded LWW upsert of each table,
and what binding a row to it needs (its width, its bool columns), built once per schema.

A store's schema is a value (``feral.sync.schema.Schema``, kept on its connection), so these are
made when a schema is first written, not at import: a store opened with a wider schema than this
release's writes its own columns (docs/PROTOCOL.md §10).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from feral.sync.schema import Schema, Table

__all__ = ["Writes", "upsert_sql", "writes_of"]


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def upsert_sql(table: Table) -> str:
    """The guarded LWW upsert for ``table``; names come from the registry only, then quoted.

    ``opaque`` holds the values of columns this node does not know (storage/db/opaque.py): it
    travels with the row's version like any column. A tombstone wins over a live row whatever
    the stamps (sync/merge.py): storage/log/erase.py has already turned every live write of a dead
    row into a tombstone, and adds the tombstone a newer live row becomes."""
    names = [*table.column_names, "hlc", "origin", "deleted", "opaque"]
    cols = ", ".join(_quote(n) for n in names)
    marks = ", ".join("?" for _ in names)
    updates = ", ".join(f"{_quote(n)} = excluded.{_quote(n)}" for n in names[1:])
    t = _quote(table.name)
    return (
        f"INSERT INTO {t} ({cols}) VALUES ({marks}) ON CONFLICT(id) DO UPDATE SET {updates} "
        f"WHERE (excluded.deleted, excluded.hlc, excluded.origin) > "
        f"({t}.deleted, {t}.hlc, {t}.origin)"
    )


@dataclass(frozen=True)
class Writes:
    """What merging rows of one schema needs, by table name: built once per schema."""

    tables: Mapping[str, Table]
    upsert: Mapping[str, str]
    code: Mapping[str, int]
    width: Mapping[str, int]
    bools: Mapping[str, tuple[int, ...]]


@cache
def writes_of(schema: Schema) -> Writes:
    """What writing rows of ``schema`` needs (cached: a schema is a value)."""
    return Writes(
        tables={t.name: t for t in schema.tables},
        upsert={t.name: upsert_sql(t) for t in schema.tables},
        code={t.name: t.code for t in schema.tables},
        width={t.name: len(t.columns) for t in schema.tables},
        bools={
            t.name: tuple(i for i, c in enumerate(t.columns) if c.kind == "bool")
            for t in schema.tables
        },
    )
