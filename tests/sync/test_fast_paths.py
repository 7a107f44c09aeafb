"""The fast paths of sync/ held to their slow paths: the same verdict, and the same error.

Each batch test (``Column.accepts_all``, ``Table.accepts_all``, ``accepts_batch``), the inline
checks of ``Table.check_values`` and the ASCII shortcut of ``normalise`` restate rules that a
slower function defines. The properties here draw values of every type, valid and not, and
require the two to agree on each; the examples pin each refusal branch of the batch tests.
"""

from __future__ import annotations

import hashlib
import math
import string
from collections.abc import Callable, Sequence
from functools import cache

import pytest
from hypothesis import example, given, settings, strategies as st

from feral.sync.delta import Delta, accepts_batch
from feral.sync.errors import SchemaError
from feral.sync.hlc import MAX_PACKED
from feral.sync.ids import caseless, fact_id, normalise
from feral.sync.schema import FACTS, MAX_INT, MIN_INT, TABLES, Column, Table
from feral.sync.types import RowId

from .strategies import node_ids, row_ids as some_row_ids, values_for

Outcome = tuple[str, str]


def outcome(call: Callable[[], object]) -> Outcome:
    """``("ok", "")``, or the class and message of what ``call`` raised."""
    try:
        call()
    except Exception as exc:  # any class: the two paths must raise the same one
        return type(exc).__name__, str(exc)
    return "ok", ""


def passes(call: Callable[[], object]) -> bool:
    return outcome(call) == ("ok", "")


class Text(str):
    """A ``str`` subclass: ``Column.check`` takes it, the batch test must ask ``check``."""


class Int(int):
    pass


class Real(float):
    pass


def _characters() -> st.SearchStrategy[str]:
    """ASCII, NUL, multi-byte characters and lone surrogates."""
    return st.sampled_from("a Z\x00\x1f") | st.characters(exclude_categories=())


texts = st.text(_characters(), max_size=10)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(MAX_INT - 1, MAX_INT + 1),
    st.integers(MIN_INT - 1, MIN_INT + 1),
    st.integers(1 << 63, 1 << 80),
    st.floats(),  # NaN and both infinities included
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0]),
    texts,
    st.binary(max_size=4),
    st.builds(Text, texts),
    st.builds(Int, st.integers()),
    st.builds(Real, st.floats()),
)
anything = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=2), inner, max_size=2)
    ),
    max_leaves=6,
)
"""A value of any type a caller could hand over, nested ones included."""

columns = st.sampled_from([c for t in TABLES for c in t.columns]) | st.builds(
    Column,
    name=st.just("c"),
    kind=st.sampled_from(["text", "int", "real", "bool"]),
    nullable=st.booleans(),
    max_bytes=st.integers(0, 12),
)


@st.composite
def column_values(draw: st.DrawFn, column: Column) -> list[object]:
    """Mostly values ``column`` accepts, with a few drawn from anything (so both verdicts occur)."""
    values = draw(st.lists(fitting(column) | texts_near_cap(column), max_size=8))
    for _ in range(draw(st.integers(0, 2))):
        values.insert(draw(st.integers(0, len(values))), draw(misfits(column)))
    return values


def misfits(column: Column) -> st.SearchStrategy[object]:
    """Mostly :func:`near_misses` of ``column``, else a value of any type."""
    near = near_misses(column)
    return st.one_of(st.sampled_from(near), st.sampled_from(near), anything)


@cache
def near_misses(column: Column) -> list[object]:
    """Values just outside what ``column`` accepts, or just inside it (made once per column:
    the texts at a cap of a conflict record's values are a megabyte each)."""
    near: list[object] = [None, True, 0, 1.0, "", math.nan, math.inf, -math.inf]
    if column.kind == "text":
        near += ["a\x00", "\x00", "\ud800", "a\udfff", "x" * (column.max_bytes + 1)]
        near += ["x" * column.max_bytes, "\u00e9" * (column.max_bytes // 2), "\u00e9\x00"]
        near += ["\u00e9" * (column.max_bytes // 2 + 1), Text("a\x00"), Text("ok"), "\ud800\udc00"]
    elif column.kind == "int":
        near += [
            MIN_INT,
            MAX_INT,
            MIN_INT - 1,
            MAX_INT + 1,
            1 << 64,
            -(1 << 64),
            False,
            Int(MAX_INT + 1),
            Int(3),
        ]
    elif column.kind == "real":
        near += [0, 1, -0.0, 5e-324, Real(math.nan), Real(2.5)]
    else:
        near += [1, False]
    return near


def passes_check(column: Column) -> Callable[[object], bool]:
    return lambda value: passes(lambda: column.check(value))


def fitting(column: Column) -> st.SearchStrategy[object]:
    """Values ``column.check`` accepts (texts short enough for any cap)."""
    if column.kind != "text":
        return values_for(column)
    short = texts_of(column.max_bytes // 4)
    short |= st.builds(Text, short)
    return st.none() | short if column.nullable else short


def texts_of(max_size: int) -> st.SearchStrategy[str]:
    valid = st.characters(exclude_categories=["Cs"], exclude_characters="\x00")
    return st.text(valid, max_size=min(max_size, 12))


def texts_near_cap(column: Column) -> st.SearchStrategy[object]:
    """Texts of a small column's cap and around it, in one- and multi-byte characters."""
    if column.kind != "text" or column.max_bytes > 64:
        return st.nothing()
    return st.text(st.sampled_from("ab\u00e9\u65e5\U0001f600"), max_size=column.max_bytes + 1)


# Column.accepts_all against Column.check


@settings(max_examples=400)
@given(st.data())
@pytest.mark.slow
def test_a_column_accepts_a_batch_exactly_when_check_accepts_each_value(data):
    column = data.draw(columns)
    values = data.draw(column_values(column))
    assert column.accepts_all(values) == all(map(passes_check(column), values))


def test_a_column_accepts_an_empty_batch():
    assert Column("c", "int").accepts_all([])


TEXT8 = Column("c", "text", max_bytes=8)


@pytest.mark.parametrize(
    ("column", "values", "verdict"),
    [
        (Column("c", "int"), [1, None], False),  # a null where none is allowed
        (Column("c", "int", nullable=True), [None, None], True),
        (Column("c", "int", nullable=True), [1, None, MAX_INT], True),
        (Column("c", "int"), [1, True], False),  # another plain type
        (Column("c", "int"), [1, Int(2)], True),  # a subclass: check decides
        (Column("c", "int"), [Int(MAX_INT + 1)], False),
        (Column("c", "int"), [MIN_INT - 1, 0], False),
        (Column("c", "int"), [0, MAX_INT + 1], False),
        (Column("c", "real"), [1.0, math.nan], False),
        (Column("c", "real"), [Real(math.inf)], False),
        (Column("c", "bool"), [True, 0], False),
        (TEXT8, ["ok", "a\x00b"], False),
        (TEXT8, ["12345678", "123456789"], False),
        (TEXT8, ["\u00e9\u00e9\u00e9\u00e9"], True),  # 8 bytes: within the cap, if only just
        (TEXT8, ["\u00e9\u00e9\u00e9\u00e9a"], False),
        (TEXT8, ["\u00e9", "\ud800"], False),  # a lone surrogate under the 4-bytes bound
        (Column("c", "text", max_bytes=4), ["\u00e9\ud800"], False),  # ... and over it
        (TEXT8, [Text("ok"), "\u00e9"], True),
        (TEXT8, [Text("a\x00")], False),
    ],
)
def test_each_refusal_branch_of_the_column_batch_test_matches_check(column, values, verdict):
    assert column.accepts_all(values) is verdict
    assert all(map(passes_check(column), values)) is verdict


# Table.check_values (inline checks) against Column.check, and Table.accepts_all


def column_by_column(table: Table, row: Sequence[object]) -> None:
    """The slow path of ``check_values`` for a row of the right length: each column's check."""
    for column, value in zip(table.columns, row, strict=True):
        column.check(value)


@st.composite
def table_rows(draw: st.DrawFn, table: Table, misfit: bool = True) -> list[object]:
    """A row of ``table``: fitting values, with ``misfit`` a few drawn from anything."""
    row = [draw(fitting(c)) for c in table.columns]
    for _ in range(draw(st.integers(0, 1 if misfit else 0))):
        at = draw(st.integers(0, len(row) - 1))
        row[at] = draw(misfits(table.columns[at]))
    return row


@pytest.mark.slow
@settings(max_examples=300)
@given(st.data())
def test_check_values_refuses_a_row_as_the_first_refusing_column_does(data):
    table = data.draw(st.sampled_from(TABLES))
    row = tuple(data.draw(table_rows(table)))
    assert outcome(lambda: table.check_values(row)) == outcome(lambda: column_by_column(table, row))


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_check_values_refuses_each_near_miss_in_each_column_as_that_column_does(table):
    row = list(table.tombstone_values("r1"))
    for at, column in enumerate(table.columns):
        for value in near_misses(column):
            bad = tuple([*row[:at], value, *row[at + 1 :]])
            slow = outcome(lambda: column_by_column(table, bad))  # noqa: B023
            assert outcome(lambda: table.check_values(bad)) == slow, (column.name, value)  # noqa: B023


@pytest.mark.slow
@settings(max_examples=200)
@given(st.data())
def test_a_table_accepts_a_batch_exactly_when_check_values_accepts_each_row(data):
    table = data.draw(st.sampled_from(TABLES))
    rows = data.draw(st.lists(table_rows(table).map(tuple), max_size=6))
    if rows and data.draw(st.booleans()):  # one row a column short or long
        rows[-1] = rows[-1][:-1] if data.draw(st.booleans()) else (*rows[-1], None)
    expected = all(passes(lambda r=r: table.check_values(r)) for r in rows)
    assert table.accepts_all(rows) is expected


def test_a_table_accepts_an_empty_batch_and_refuses_rows_of_the_wrong_length():
    row = FACTS.tombstone_values("r1")
    assert FACTS.accepts_all([])
    assert not FACTS.accepts_all([row, row[:-1]])
    assert not FACTS.accepts_all([(*row, b"not plain")])
    assert FACTS.accepts_all([(*row, None)])  # a newer schema's column, kept opaque


# accepts_batch against Delta.check


def delta_checks(table: str, origin: object, row_ids: Sequence[object], rows: Sequence[object]):
    """Whether each delta of the batch passes ``Delta.check``, at both ends of the hlc range."""
    return all(
        passes(Delta(table, row_id, hlc, origin, row).check)  # type: ignore[arg-type]
        for row_id, row in zip(row_ids, rows, strict=True)
        for hlc in (1, MAX_PACKED)
    )


@st.composite
def local_batches(draw: st.DrawFn) -> tuple[str, object, list[object], list[object]]:
    """A batch as ``commit_local`` hands it over, now and then with a fault in it."""
    table = draw(st.sampled_from(TABLES))
    rows: list[object] = [tuple(r) for r in draw(st.lists(table_rows(table, False), max_size=6))]
    row_ids = [row[0] for row in rows]  # type: ignore[index]
    name, origin = table.name, draw(node_ids)
    fault = draw(st.sampled_from(["none", "value", "id", "tombstone", "list", "name", "origin"]))
    if fault == "value" and rows:
        rows[draw(st.integers(0, len(rows) - 1))] = tuple(draw(table_rows(table)))
    elif fault == "id" and rows:
        row_ids[draw(st.integers(0, len(rows) - 1))] = draw(
            some_row_ids | misfits(FACTS.columns[0])
        )
    elif fault in ("tombstone", "list") and rows:
        at = draw(st.integers(0, len(rows) - 1))
        rows[at] = None if fault == "tombstone" else list(rows[at])  # type: ignore[arg-type]
    elif fault == "name":
        name = draw(st.sampled_from(["memories", "Facts", ""]))
    elif fault == "origin":
        origin = draw(anything)
    return name, origin, row_ids, rows


@pytest.mark.slow
@settings(max_examples=200)
@given(local_batches())
def test_a_batch_accepted_whole_passes_every_delta_check_and_only_tombstones_are_unsure(batch):
    name, origin, row_ids, rows = batch
    verdict = accepts_batch(name, origin, row_ids, rows)  # type: ignore[arg-type]
    expected = delta_checks(name, origin, row_ids, rows)
    if rows and all(type(row) is tuple for row in rows):
        assert verdict is expected
    else:  # tombstones, list rows or no rows: "not sure", and the caller checks each delta
        assert verdict is False


# normalise's ASCII shortcut against the canonical caseless form


def spelled_out(text: str) -> str:
    """:func:`normalise` without its shortcut: caseless form, whitespace collapsed."""
    return " ".join(caseless(text).split())


@pytest.mark.parametrize("char", [chr(c) for c in range(128)])
def test_lower_is_the_caseless_form_of_every_ascii_character(char):
    assert caseless(char) == char.lower()


@given(st.text(string.printable + "\x00\x1c\x1d\x1e\x1f\x7f") | st.text(_characters()))
@example("ΐ Ϊ́")
def test_normalise_equals_its_spelled_out_form_for_every_string(text):
    assert normalise(text) == spelled_out(text)


def slow_fact_id(subject: str, predicate: str, obj: str) -> RowId:
    key = f"{spelled_out(subject)}\x1f{spelled_out(predicate)}\x1f{spelled_out(obj)}"
    try:
        encoded = key.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SchemaError("a fact's text is not valid Unicode") from exc
    return RowId("f" + hashlib.sha256(encoded).hexdigest()[:31])


ascii_or_any = st.text(string.printable) | st.text(_characters(), max_size=6)


@given(ascii_or_any, ascii_or_any, ascii_or_any)
def test_a_fact_id_is_the_spelled_out_hash_for_every_string(subject, predicate, obj):
    assert outcome(lambda: fact_id(subject, predicate, obj)) == outcome(
        lambda: slow_fact_id(subject, predicate, obj)
    )
    if subject.isascii() and predicate.isascii() and obj.isascii():
        assert fact_id(subject, predicate, obj) == slow_fact_id(subject, predicate, obj)
