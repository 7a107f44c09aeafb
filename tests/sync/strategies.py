"""Hypothesis strategies shared by the sync tests: node ids, valid values, deltas and pages."""

from __future__ import annotations

import base64
import itertools

from hypothesis import strategies as st

from feral.sync.delta import Delta, Page
from feral.sync.hlc import MAX_PACKED
from feral.sync.schema import MAX_INT, MIN_INT, TABLES, Column, Table, Value
from feral.sync.types import NodeId, RowId

__all__ = [
    "deltas",
    "node_ids",
    "pages",
    "row_ids",
    "rows",
    "texts",
    "values_for",
]

MAX_STEP = 1 << 40
"""Largest gap between consecutive stamps in a generated page."""

node_ids = st.binary(min_size=20, max_size=20).map(
    lambda digest: NodeId(base64.b32encode(digest).decode("ascii").lower())
)
"""Ids shaped like the real ones: lower-case base32 of a 160-bit fingerprint, 32 characters."""


def texts(max_size: int = 12) -> st.SearchStrategy[str]:
    """Text a schema text column accepts: no NUL, no lone surrogate, at most 4 bytes a character."""
    chars = st.characters(exclude_categories=["Cs"], exclude_characters="\x00")
    return st.text(alphabet=chars, max_size=max_size)


row_ids = texts(max_size=32).map(RowId)  # 32 characters of 4 bytes fit the id column's 128


def values_for(column: Column) -> st.SearchStrategy[Value]:
    """Values that satisfy ``column.check``."""
    base: st.SearchStrategy[Value]
    if column.kind == "text":
        base = texts(max_size=min(12, column.max_bytes // 4))
    elif column.kind == "int":
        base = st.integers(MIN_INT, MAX_INT)
    elif column.kind == "real":
        base = st.floats(allow_nan=False, allow_infinity=False)
    else:
        base = st.booleans()
    return st.none() | base if column.nullable else base


@st.composite
def rows(draw: st.DrawFn, table: Table, row_id: str) -> tuple[Value, ...]:
    """A full row of ``table`` in column order, starting with ``row_id``."""
    rest = tuple(draw(values_for(c)) for c in table.columns[1:])
    return (row_id, *rest)


@st.composite
def deltas(
    draw: st.DrawFn,
    origin: NodeId | None = None,
    hlc: int | None = None,
) -> Delta:
    """A valid delta, a tombstone or a full row; the origin and stamp are drawn unless given."""
    table = draw(st.sampled_from(TABLES))
    row_id = draw(row_ids)
    tombstone = draw(st.booleans())
    return Delta(
        table=table.name,
        row_id=row_id,
        hlc=draw(st.integers(1, MAX_PACKED)) if hlc is None else hlc,
        origin=draw(node_ids) if origin is None else origin,
        values=None if tombstone else draw(rows(table, row_id)),
    )


@st.composite
def pages(draw: st.DrawFn, max_deltas: int = 6) -> Page:
    """A page that passes ``Page.check``: one origin, stamps increasing above ``after``."""
    origin = draw(node_ids)
    after = draw(st.integers(0, MAX_PACKED - max_deltas * MAX_STEP))
    steps = draw(st.lists(st.integers(1, MAX_STEP), max_size=max_deltas))
    stamps = list(itertools.accumulate(steps, initial=after))[1:]
    return Page(origin, after, tuple(draw(deltas(origin, hlc)) for hlc in stamps))
