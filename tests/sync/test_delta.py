from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from hypothesis import given, settings, strategies as st

from feral.sync.delta import MAX_PAGE_DELTAS, Delta, Page, Version, check_node_id
from feral.sync.errors import ProtocolError, SchemaError
from feral.sync.hlc import MAX_PACKED, Timestamp, pack
from feral.sync.schema import EPISODES, FACTS, Value
from feral.sync.types import NodeId, RowId

from .strategies import deltas, node_ids, pages

A = NodeId("a" * 32)
B = NodeId("b" * 32)


FACT_ROW: tuple[Value, ...] = ("r1", "alice", "likes", "tea", 0.9, None, 1_700_000_000_000, False)


def fact(
    hlc: int = 1,
    origin: NodeId = A,
    row_id: str = "r1",
    values: tuple[Value, ...] | None = FACT_ROW,
) -> Delta:
    return Delta("facts", RowId(row_id), hlc, origin, values)


def tombstone(hlc: int = 1, origin: NodeId = A, row_id: str = "r1") -> Delta:
    return Delta("facts", RowId(row_id), hlc, origin, None)


def assert_protocol_error(check: Callable[[], object], match: str) -> None:
    """Raised as a ProtocolError proper, not as its SchemaError subclass."""
    with pytest.raises(ProtocolError, match=match) as excinfo:
        check()
    assert excinfo.type is ProtocolError


# check_node_id


@given(node_ids)
def test_check_node_id_accepts_32_characters_of_lowercase_base32(node_id):
    assert check_node_id(node_id) == node_id


@pytest.mark.parametrize(
    "node_id",
    [
        "a" * 31,
        "a" * 33,
        "",
        "A" * 32,
        "a" * 31 + "1",
        "a" * 31 + "0",
        "a" * 31 + "8",
        "a" * 31 + "=",
        "a" * 31 + "é",
        b"a" * 32,
        None,
        12345,
        ["a"] * 32,
    ],
)
def test_check_node_id_refuses_malformed_ids(node_id):
    assert_protocol_error(lambda: check_node_id(node_id), "malformed node id")


def test_check_node_id_quotes_at_most_80_characters_of_a_long_id():
    with pytest.raises(ProtocolError) as excinfo:
        check_node_id("x" * 10_000)
    assert len(str(excinfo.value)) < 120


# Version and Delta


def test_version_orders_by_hlc_then_origin():
    assert Version(2, A) > Version(1, B)
    assert Version(1, B) > Version(1, A)
    assert Version(1, A) == Version(1, A)


@given(st.integers(1, MAX_PACKED), node_ids, st.integers(1, MAX_PACKED), node_ids)
def test_version_order_is_timestamp_order(h1, o1, h2, o2):
    a, b = Version(h1, o1), Version(h2, o2)
    assert (a < b) == (a.timestamp < b.timestamp)
    assert (a == b) == (a.timestamp == b.timestamp)


def test_version_timestamp_unpacks_the_hlc_with_the_origin():
    assert Version(pack(7, 3), B).timestamp == Timestamp(7, 3, B)


def test_delta_version_is_its_hlc_and_origin():
    assert fact(hlc=9, origin=B).version == Version(9, B)


def test_a_delta_with_values_is_not_a_tombstone():
    delta = fact()
    assert not delta.is_tombstone
    assert delta.row_values() == delta.values


def test_a_tombstone_leaves_the_id_and_empty_columns():
    delta = tombstone(row_id="gone")
    assert delta.is_tombstone
    assert delta.row_values() == FACTS.tombstone_values("gone")
    assert delta.schema() is FACTS


@given(deltas())
def test_generated_deltas_pass_their_check(delta):
    delta.check()


def test_delta_check_refuses_an_unknown_table():
    delta = dataclasses.replace(fact(), table="memories")
    with pytest.raises(SchemaError, match="unknown table"):
        delta.check()


def test_delta_check_refuses_a_malformed_origin():
    delta = fact(origin=NodeId("A" * 32))
    assert_protocol_error(delta.check, "malformed node id")


@pytest.mark.parametrize("hlc", [True, 1.0, "1", None])
def test_delta_check_refuses_a_non_integer_hlc(hlc):
    assert_protocol_error(fact(hlc=hlc).check, "must be an integer")


@pytest.mark.parametrize("hlc", [0, -1, MAX_PACKED + 1])
def test_delta_check_refuses_an_hlc_out_of_range(hlc):
    assert_protocol_error(fact(hlc=hlc).check, "out of range")


def test_delta_check_accepts_the_largest_hlc():
    fact(hlc=MAX_PACKED).check()


@pytest.mark.parametrize("row_id", ["x" * 129, 7, None, "a\x00b"])
def test_delta_check_refuses_a_bad_row_id_even_in_a_tombstone(row_id):
    with pytest.raises(SchemaError):
        tombstone(row_id=row_id).check()


def test_delta_check_refuses_a_row_id_that_differs_from_the_id_column():
    with pytest.raises(SchemaError, match="row id differs"):
        fact(row_id="r2").check()


def test_delta_check_refuses_a_wrong_number_of_values():
    with pytest.raises(SchemaError, match="columns"):
        fact(values=("r1", "alice")).check()


def test_delta_check_refuses_values_of_another_table():
    row = EPISODES.tombstone_values("r1")
    with pytest.raises(SchemaError):
        fact(values=row).check()


# Page


@settings(max_examples=30)
@given(pages())
def test_generated_pages_pass_their_check(page):
    page.check()


def test_an_empty_page_is_valid_and_keeps_its_cursor():
    page = Page(A, 42, ())
    page.check()
    assert page.last_hlc == 42


def test_a_page_cursor_is_its_last_stamp():
    page = Page(A, 0, (fact(hlc=3), tombstone(hlc=8)))
    page.check()
    assert page.last_hlc == 8


def test_page_check_refuses_a_malformed_origin():
    assert_protocol_error(Page(NodeId("nope"), 0, ()).check, "malformed node id")


@pytest.mark.parametrize("after", [True, 0.0, "0", None])
def test_page_check_refuses_a_non_integer_cursor(after):
    assert_protocol_error(Page(A, after, ()).check, "must be an integer")


@pytest.mark.parametrize("after", [-1, MAX_PACKED + 1])
def test_page_check_refuses_a_cursor_out_of_range(after):
    assert_protocol_error(Page(A, after, ()).check, "out of range")


def test_page_check_refuses_more_than_max_page_deltas():
    many = tuple(tombstone(hlc=h) for h in range(1, MAX_PAGE_DELTAS + 2))
    Page(A, 0, many[:MAX_PAGE_DELTAS]).check()
    assert_protocol_error(Page(A, 0, many).check, f"at most {MAX_PAGE_DELTAS}")


def test_page_check_refuses_a_page_that_mixes_origins():
    page = Page(A, 0, (fact(hlc=1), fact(hlc=2, origin=B)))
    assert_protocol_error(page.check, "mixes origins")


@pytest.mark.parametrize("stamps", [(2, 2), (3, 2), (5, 9, 7)])
def test_page_check_refuses_stamps_that_do_not_increase(stamps):
    page = Page(A, 0, tuple(fact(hlc=h) for h in stamps))
    assert_protocol_error(page.check, "must increase")


@pytest.mark.parametrize("first", [5, 4])
def test_page_check_refuses_a_stamp_at_or_below_the_cursor(first):
    page = Page(A, 5, (fact(hlc=first),))
    assert_protocol_error(page.check, "above its cursor")


def test_page_check_validates_every_delta():
    page = Page(A, 0, (fact(hlc=1), fact(hlc=2, row_id="other")))
    with pytest.raises(SchemaError):
        page.check()


@settings(max_examples=20)
@given(st.data())
def test_a_page_whose_origin_differs_from_its_deltas_is_refused(data):
    page = data.draw(pages().filter(lambda p: p.deltas))
    other = data.draw(node_ids.filter(lambda n: n != page.origin))
    assert_protocol_error(dataclasses.replace(page, origin=other).check, "mixes origins")
