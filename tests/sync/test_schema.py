from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

from feral.sync.errors import SchemaError
from feral.sync.schema import (
    BASE_SCHEMA,
    EPISODES,
    EXEC_LOG,
    FACTS,
    MAX_INT,
    MIN_INT,
    SCHEMA_VERSION,
    TABLES,
    Column,
    Schema,
    table_by_code,
    table_by_name,
)

from .strategies import row_ids, values_for

TEXT = Column("note", "text", max_bytes=8)
NULLABLE_TEXT = Column("note", "text", nullable=True, max_bytes=8)
INT = Column("count", "int")
REAL = Column("score", "real")
BOOL = Column("flag", "bool")


def assert_refused(column: Column, value: object, match: str) -> None:
    with pytest.raises(SchemaError, match=match):
        column.check(value)


# Column.check


def test_a_non_nullable_column_refuses_null():
    for column in (TEXT, INT, REAL, BOOL):
        assert_refused(column, None, "may not be null")


def test_a_nullable_column_accepts_null():
    NULLABLE_TEXT.check(None)


def test_a_nullable_column_still_checks_a_present_value():
    assert_refused(NULLABLE_TEXT, 3, "expects text")


@pytest.mark.parametrize("value", ["", "abc", "é日本", "12345678"])
def test_a_text_column_accepts_text_within_its_byte_cap(value):
    TEXT.check(value)


@pytest.mark.parametrize("value", [b"abc", 3, 1.5, True, ["a"]])
def test_a_text_column_refuses_anything_but_str(value):
    assert_refused(TEXT, value, "expects text")


def test_a_text_column_caps_utf8_bytes_not_characters():
    TEXT.check("éééé")  # 4 characters, 8 bytes
    assert_refused(TEXT, "ééééa", "9 bytes exceeds 8")


def test_a_text_column_refuses_a_nul_character():
    assert_refused(TEXT, "a\x00b", "NUL")


@pytest.mark.parametrize("value", ["\ud800", "a\udfffb"])
def test_a_text_column_refuses_lone_surrogates(value):
    assert_refused(TEXT, value, "not valid Unicode")


@pytest.mark.parametrize("value", [True, False])
def test_a_bool_column_accepts_bools(value):
    BOOL.check(value)


@pytest.mark.parametrize("value", [0, 1, 0.0, "true"])
def test_a_bool_column_refuses_ints_floats_and_strings(value):
    assert_refused(BOOL, value, "expects a bool")


@pytest.mark.parametrize("value", [MIN_INT, -1, 0, 1, MAX_INT])
def test_an_int_column_accepts_signed_64_bit_integers(value):
    INT.check(value)


@pytest.mark.parametrize("value", [True, False, 1.0, "1", b"1"])
def test_an_int_column_refuses_bools_floats_strings_and_bytes(value):
    assert_refused(INT, value, "expects an integer")


@pytest.mark.parametrize("value", [MIN_INT - 1, MAX_INT + 1, 2**64 - 1])
def test_an_int_column_refuses_integers_outside_64_bits(value):
    assert_refused(INT, value, "out of 64-bit range")


@pytest.mark.parametrize("value", [0.0, -0.0, 1.5, -1e308, 5e-324])
def test_a_real_column_accepts_finite_floats(value):
    REAL.check(value)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 1, True, "1.0"])
def test_a_real_column_refuses_non_finite_floats_and_non_floats(value):
    assert_refused(REAL, value, "expects a finite float")


# Table


@settings(max_examples=50)
@given(st.data())
def test_every_table_accepts_rows_of_valid_values(data):
    table = data.draw(st.sampled_from(TABLES))
    row_id = data.draw(row_ids)
    values = (row_id, *(data.draw(values_for(c)) for c in table.columns[1:]))
    table.check_values(values)


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_check_values_refuses_a_wrong_column_count(table):
    row = table.tombstone_values("r1")
    with pytest.raises(SchemaError, match=f"{len(table.columns)} columns"):
        table.check_values(row[:-1])
    with pytest.raises(SchemaError, match=f"{len(table.columns)} columns"):
        table.check_values((*row, *[None] * 17))  # more unknown columns than any newer schema adds


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_check_values_keeps_plain_values_of_columns_a_newer_schema_added(table):
    row = table.tombstone_values("r1")
    table.check_values((*row, "blue", None, 3, 1.5, True))
    for bad in (b"bytes", float("nan"), 1 << 64, "a\x00b", ["nested"]):
        with pytest.raises(SchemaError, match="unknown column"):
            table.check_values((*row, bad))


def test_check_values_refuses_one_wrongly_typed_column():
    row = list(FACTS.tombstone_values("r1"))
    row[FACTS.column_names.index("confidence")] = 1
    with pytest.raises(SchemaError, match="confidence"):
        FACTS.check_values(tuple(row))


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_tombstone_values_keep_the_id_and_pass_the_schema(table):
    row = table.tombstone_values("r1")
    assert row[0] == "r1"
    assert len(row) == len(table.columns)
    table.check_values(row)


def test_tombstone_values_empty_each_column_by_kind_and_null_where_nullable():
    assert FACTS.tombstone_values("r1") == ("r1", "", "", "", 0.0, None, 0, False)
    assert EPISODES.tombstone_values("r2") == ("r2", "", "", "", 0, False)
    confidence = FACTS.tombstone_values("r1")[FACTS.column_names.index("confidence")]
    assert isinstance(confidence, float)
    archived = FACTS.tombstone_values("r1")[-1]
    assert archived is False


def test_every_table_starts_with_its_id_column():
    for table in TABLES:
        assert table.column_names[0] == "id"
        assert table.columns[0].kind == "text"
        assert not table.columns[0].nullable


def test_fts_columns_are_text_columns_of_their_table():
    for table in TABLES:
        kinds = {c.name: c.kind for c in table.columns}
        assert all(kinds[name] == "text" for name in table.fts)


def test_only_episodes_and_facts_have_an_archive_flag():
    assert EPISODES.has_archive
    assert FACTS.has_archive
    assert not EXEC_LOG.has_archive


def test_table_names_and_codes_are_unique():
    assert len({t.name for t in TABLES}) == len(TABLES)
    assert len({t.code for t in TABLES}) == len(TABLES)


# look-ups


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_tables_are_found_by_name_and_by_code(table):
    assert table_by_name(table.name) is table
    assert table_by_code(table.code) is table


@pytest.mark.parametrize("name", ["memories", "", "Facts", "facts ", 2, None, b"facts"])
def test_table_by_name_refuses_an_unknown_name(name):
    with pytest.raises(SchemaError, match="unknown table"):
        table_by_name(name)


@pytest.mark.parametrize("code", [0, 8, -1, 2**64, "1", 1.0, 2.0, None])
def test_table_by_code_refuses_an_unknown_code(code):
    with pytest.raises(SchemaError, match="unknown table code"):
        table_by_code(code)


@pytest.mark.parametrize("code", [True, False])
def test_table_by_code_refuses_a_bool_even_where_it_equals_a_code(code):
    with pytest.raises(SchemaError, match="unknown table code"):
        table_by_code(code)


# the schema as a value

COLOR = Column("color", "text", nullable=True, max_bytes=64, added_in=SCHEMA_VERSION + 1)


def test_the_base_schema_is_this_releases_tables_at_its_version():
    assert BASE_SCHEMA.tables == TABLES and BASE_SCHEMA.version == SCHEMA_VERSION
    assert all(BASE_SCHEMA.by_name(t.name) is t is BASE_SCHEMA.by_code(t.code) for t in TABLES)


def test_with_column_returns_a_wider_schema_and_leaves_the_base_as_it_was():
    before = FACTS.columns
    wider = BASE_SCHEMA.with_column("facts", COLOR)
    assert wider.version == SCHEMA_VERSION + 1 and wider != BASE_SCHEMA
    assert wider.by_name("facts").column_names == (*FACTS.column_names, "color")
    assert wider.by_code(FACTS.code) is wider.by_name("facts")
    assert FACTS.columns == before and BASE_SCHEMA.by_name("facts") is FACTS
    assert wider.by_name("episodes") is EPISODES
    assert BASE_SCHEMA.version == SCHEMA_VERSION and "color" not in FACTS.column_names


def test_equal_schemas_are_equal_values_with_one_hash():
    one, two = (BASE_SCHEMA.with_column("facts", COLOR) for _ in range(2))
    assert one is not two and one == two and hash(one) == hash(two)
    assert len({BASE_SCHEMA, one, two}) == 2


def test_a_second_column_of_the_same_version_may_follow_the_first():
    more = Column("shade", "int", nullable=True, added_in=SCHEMA_VERSION + 1)
    wider = BASE_SCHEMA.with_column("facts", COLOR).with_column("episodes", more)
    assert wider.version == SCHEMA_VERSION + 1
    assert wider.by_name("episodes").column_names[-1] == "shade"


@pytest.mark.parametrize(
    "column",
    [
        Column("color", "text", added_in=SCHEMA_VERSION + 1),  # not nullable
        Column("color", "text", nullable=True),  # no version
        Column("color", "text", nullable=True, added_in=SCHEMA_VERSION),  # the base's own
        Column("color", "text", nullable=True, added_in=SCHEMA_VERSION + 2),  # skips one
    ],
    ids=["not-nullable", "no-version", "base-version", "skipped-version"],
)
def test_with_column_refuses_a_column_no_next_version_could_add(column):
    with pytest.raises(SchemaError, match="must be nullable"):
        BASE_SCHEMA.with_column("facts", column)


@pytest.mark.parametrize("name", ["object", "_color", "hlc", "origin", "deleted", "opaque"])
def test_with_column_refuses_a_name_the_table_or_storage_already_uses(name):
    column = Column(name, "text", nullable=True, added_in=SCHEMA_VERSION + 1)
    with pytest.raises(SchemaError, match="cannot take a column named"):
        BASE_SCHEMA.with_column("facts", column)


def test_with_column_refuses_an_unknown_table():
    with pytest.raises(SchemaError, match="unknown table"):
        BASE_SCHEMA.with_column("colors", COLOR)


def test_a_schema_naming_a_table_twice_is_refused():
    with pytest.raises(SchemaError, match="each table"):
        Schema((FACTS, FACTS), SCHEMA_VERSION)


@pytest.mark.parametrize("code", [True, 2.0, "2", None])
def test_a_schema_finds_a_table_only_by_an_integer_code(code):
    with pytest.raises(SchemaError, match="unknown table code"):
        BASE_SCHEMA.by_code(code)
