from __future__ import annotations

import math
from collections.abc import Sequence

import msgpack
import pytest
from hypothesis import given, settings, strategies as st

from feral.sync.codec import (
    KIND_PAGE,
    MAX_DEPTH,
    MAX_FRAME_BYTES,
    PROTOCOL_VERSION,
    decode_page,
    decode_values,
    encode_page,
    encode_values,
    unpack_frame,
)
from feral.sync.delta import MAX_PAGE_DELTAS, UNKNOWN_PRIOR, Delta, Page, Version
from feral.sync.errors import DecodeError, FeralError, ProtocolError, SchemaError
from feral.sync.hlc import MAX_PACKED
from feral.sync.schema import EPISODES, EXEC_LOG, FACTS
from feral.sync.types import NodeId, RowId

from .strategies import node_ids, pages

ORIGIN = NodeId("a" * 32)
FACT_REST = ["alice", "likes", "tea", 0.9, None, 1_700_000_000_000, False]
"""A valid facts row after its id, in column order."""

u64 = st.integers(-(2**63), 2**64 - 1)
plain_values = st.one_of(
    st.none(),
    st.booleans(),
    u64,
    st.floats(),
    st.text(st.characters(exclude_categories=["Cs"])),
)


def frame(
    entries: Sequence[object] = (),
    origin: object = ORIGIN,
    after: object = 0,
    version: object = PROTOCOL_VERSION,
    kind: object = KIND_PAGE,
) -> bytes:
    """A page frame built by hand, so it can be wrong in exactly one way."""
    data: bytes = msgpack.packb([version, kind, origin, after, list(entries)], use_bin_type=True)
    return data


def fact_entry(hlc: int = 1, row_id: object = "r1", **column: object) -> list[object]:
    rest = list(FACT_REST)
    for name, value in column.items():
        rest[FACTS.column_names.index(name) - 1] = value
    return [FACTS.code, hlc, row_id, rest, None]


def nested(depth: int) -> object:
    obj: object = 0
    for _ in range(depth):
        obj = [obj]
    return obj


def assert_same_value(a: object, b: object) -> None:
    """Equal and of one type; floats also of one sign and NaN-ness (``==`` hides all three)."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a):
            assert math.isnan(b)
            return
        assert math.copysign(1.0, a) == math.copysign(1.0, b)
    assert a == b


def assert_same_values(a: tuple[object, ...] | None, b: tuple[object, ...] | None) -> None:
    if a is None or b is None:
        assert a is b
        return
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert_same_value(x, y)


def assert_refused_or_valid(data: bytes) -> None:
    """Malformed input may only raise feral's own errors; whatever decodes is a valid page."""
    try:
        page = decode_page(data)
    except FeralError:
        return
    page.check()


# round trips


@settings(max_examples=100)
@given(pages())
@pytest.mark.slow
def test_a_valid_page_survives_encode_then_decode(page):
    decoded = decode_page(encode_page(page))
    assert decoded == page
    for got, sent in zip(decoded.deltas, page.deltas, strict=True):
        assert_same_values(got.values, sent.values)


def test_a_page_of_every_table_and_a_tombstone_round_trips():
    page = Page(
        ORIGIN,
        10,
        (
            Delta("episodes", RowId("e1"), 11, ORIGIN, ("e1", "s", "", "[]", -5, True)),
            Delta("facts", RowId("f1"), 12, ORIGIN, ("f1", "é", "日本", "x", -0.0, "e1", 0, False)),
            Delta("exec_log", RowId("x1"), 13, ORIGIN, ("x1", "s", "t", "{}", "", 3, True, 1)),
            Delta("facts", RowId("f2"), MAX_PACKED, ORIGIN, None),
        ),
    )
    decoded = decode_page(encode_page(page))
    assert decoded == page
    assert [d.table for d in decoded.deltas] == [EPISODES.name, FACTS.name, EXEC_LOG.name, "facts"]
    assert decoded.deltas[-1].is_tombstone
    confidence = decoded.deltas[1].row_values()[4]
    assert isinstance(confidence, float)
    assert math.copysign(1.0, confidence) == -1.0


def test_an_empty_page_round_trips():
    page = Page(ORIGIN, 0, ())
    assert decode_page(encode_page(page)) == page


def test_the_page_layout_matches_the_documented_wire_format():
    page = Page(ORIGIN, 5, (Delta("facts", RowId("r1"), 6, ORIGIN, None),))
    assert msgpack.unpackb(encode_page(page)) == [3, 1, ORIGIN, 5, [[2, 6, "r1", None, None]]]


def test_a_delta_carries_the_version_it_replaced():
    prior = Version(4, ORIGIN)
    page = Page(ORIGIN, 5, (Delta("facts", RowId("r1"), 6, ORIGIN, None, prior),))
    entry = msgpack.unpackb(encode_page(page))[4][0]
    assert entry == [2, 6, "r1", None, [4, ORIGIN]]
    assert decode_page(encode_page(page)).deltas[0].prior == prior


def test_an_unknown_prior_round_trips_and_nothing_else_with_stamp_zero():
    page = Page(ORIGIN, 5, (Delta("facts", RowId("r1"), 6, ORIGIN, None, UNKNOWN_PRIOR),))
    assert decode_page(encode_page(page)).deltas[0].prior == UNKNOWN_PRIOR
    with pytest.raises(ProtocolError, match="prior hlc 0"):
        decode_page(frame([[FACTS.code, 1, "r1", None, [0, ORIGIN]]]))


@pytest.mark.parametrize("prior", [5, "p", [1], [1, 2], ["1", ORIGIN], [True, ORIGIN]])
def test_a_malformed_prior_is_refused(prior):
    with pytest.raises((DecodeError, ProtocolError)):
        decode_page(frame([[FACTS.code, 2, "r1", None, prior]]))


@given(st.lists(plain_values, max_size=10).map(tuple))
def test_row_values_survive_encode_then_decode(values):
    assert_same_values(decode_values(encode_values(values)), values)


@pytest.mark.parametrize(
    "values",
    [
        (),
        (math.nan,),
        (-0.0, 0.0),
        (math.inf, -math.inf),
        (2**64 - 1, -(2**63), 2**63),
        ("", "日本語", "é", "e\u0301", "🦀", "\x00"),
        (True, False, None, 0, 1),
    ],
)
def test_edge_row_values_survive_encode_then_decode(values):
    assert_same_values(decode_values(encode_values(values)), values)


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, "\ud800", object()])
def test_encode_values_refuses_what_msgpack_cannot_carry(value):
    with pytest.raises(DecodeError, match="cannot encode"):
        encode_values((value,))


# malformed input


@settings(max_examples=500)
@given(st.binary(max_size=200))
def test_random_bytes_are_refused_with_feral_errors_only(data):
    assert_refused_or_valid(data)
    try:
        decode_values(data)
    except FeralError:
        pass


junk = st.recursive(
    plain_values | st.binary(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=12,
)
entry_like = st.one_of(
    junk,
    st.tuples(
        st.integers(-1, 4) | junk,
        st.integers(-1, 2**64 - 1) | junk,
        st.text(max_size=4) | junk,
        st.none() | st.lists(junk | plain_values, max_size=9),
    ).map(list),
)


@settings(max_examples=100)
@given(
    version=st.just(PROTOCOL_VERSION) | junk,
    kind=st.just(KIND_PAGE) | junk,
    origin=node_ids | junk,
    after=st.integers(0, 2**64 - 1) | junk,
    entries=st.lists(entry_like, max_size=4) | junk,
)
def test_page_shaped_junk_is_refused_with_feral_errors_only(version, kind, origin, after, entries):
    assert_refused_or_valid(msgpack.packb([version, kind, origin, after, entries]))


@settings(max_examples=40)
@given(pages(max_deltas=3), st.randoms(use_true_random=False))
def test_a_valid_frame_with_any_byte_flipped_is_refused_or_still_valid(page, random):
    encoded = encode_page(page)
    for index in range(len(encoded)):
        mutated = bytearray(encoded)
        mutated[index] ^= random.randint(1, 255)
        assert_refused_or_valid(bytes(mutated))


@settings(max_examples=40)
@given(pages(max_deltas=3))
def test_a_valid_frame_truncated_anywhere_is_refused(page):
    encoded = encode_page(page)
    for cut in range(len(encoded)):
        with pytest.raises(DecodeError):
            decode_page(encoded[:cut])


@settings(max_examples=40)
@given(pages(max_deltas=3), st.binary(min_size=1, max_size=16))
def test_a_valid_frame_with_trailing_bytes_is_refused(page, trailer):
    with pytest.raises(DecodeError, match="ExtraData"):
        decode_page(encode_page(page) + trailer)


def test_a_frame_over_the_size_limit_is_refused_before_parsing():
    with pytest.raises(DecodeError, match="exceeds"):
        unpack_frame(b"\xc0" * (MAX_FRAME_BYTES + 1))


def test_a_frame_of_exactly_the_size_limit_is_parsed():
    header = len(msgpack.packb(["x" * MAX_FRAME_BYTES]))
    data = msgpack.packb(["x" * (2 * MAX_FRAME_BYTES - header)])
    assert len(data) == MAX_FRAME_BYTES
    assert decode_values(data)[0] == "x" * (2 * MAX_FRAME_BYTES - header)


def test_a_valid_page_too_large_for_one_frame_is_refused_by_the_decoder():
    big = "x" * 60_000
    page = Page(
        ORIGIN,
        0,
        tuple(
            Delta("exec_log", RowId(f"x{i}"), i, ORIGIN, (f"x{i}", "s", "t", big, big, 1, True, 1))
            for i in range(1, 40)
        ),
    )
    page.check()
    with pytest.raises(DecodeError, match="exceeds"):
        decode_page(encode_page(page))


@pytest.mark.parametrize("data", [bytearray(b"\x91\x01"), memoryview(b"\x91\x01")])
def test_unpack_frame_accepts_any_bytes_like(data):
    assert unpack_frame(data) == [1]


@pytest.mark.parametrize("data", ["\x91\x01", [1], None, 145])
def test_unpack_frame_refuses_non_bytes(data):
    with pytest.raises(DecodeError, match="must be bytes"):
        unpack_frame(data)


def test_msgpack_extension_types_are_refused():
    data = msgpack.packb([msgpack.ExtType(5, b"boom")])
    with pytest.raises(DecodeError, match="extension type 5"):
        unpack_frame(data)


@pytest.mark.parametrize("stamp", [msgpack.Timestamp(0, 0), msgpack.Timestamp(2**33, 1)])
def test_msgpack_timestamps_are_refused(stamp):
    with pytest.raises(DecodeError, match="Timestamp is not allowed"):
        unpack_frame(msgpack.packb([stamp]))


def test_a_malformed_msgpack_timestamp_is_refused():
    with pytest.raises(DecodeError, match="malformed"):
        unpack_frame(b"\xd5\xff\x00\x00")  # ext -1 (Timestamp) with a 2-byte body


def test_duplicate_map_keys_are_refused():
    with pytest.raises(DecodeError, match="duplicate keys"):
        unpack_frame(b"\x82\xa1k\x01\xa1k\x02")  # {"k": 1, "k": 2}


def test_non_string_map_keys_are_refused():
    with pytest.raises(DecodeError):
        unpack_frame(msgpack.packb({1: 2}))


def test_maps_with_distinct_keys_are_accepted():
    assert unpack_frame(msgpack.packb({"a": [1], "b": {"c": None}})) == {
        "a": [1],
        "b": {"c": None},
    }


def test_nesting_up_to_max_depth_is_accepted():
    assert unpack_frame(msgpack.packb(nested(MAX_DEPTH))) == nested(MAX_DEPTH)


def test_nesting_deeper_than_max_depth_is_refused():
    with pytest.raises(DecodeError, match="nesting"):
        unpack_frame(msgpack.packb(nested(MAX_DEPTH + 1)))


def test_nesting_through_maps_counts_too():
    obj: object = 0
    for _ in range(MAX_DEPTH + 1):
        obj = {"k": obj}
    with pytest.raises(DecodeError, match="nesting"):
        unpack_frame(msgpack.packb(obj))


def test_very_deep_nesting_is_refused_without_recursion_errors():
    with pytest.raises(DecodeError):
        decode_page(b"\x91" * 100_000 + b"\x00")


def test_decode_values_refuses_anything_but_an_array():
    with pytest.raises(DecodeError, match="must be an array"):
        decode_values(msgpack.packb({"a": 1}))


# page structure


@pytest.mark.parametrize(
    "obj",
    [
        None,
        {"v": 1},
        [1, 1, ORIGIN, 0],
        [1, 1, ORIGIN, 0, [], None],
    ],
)
def test_a_page_must_be_an_array_of_five(obj):
    with pytest.raises(DecodeError, match="array of 5"):
        decode_page(msgpack.packb(obj))


@pytest.mark.parametrize("version", [0, 1, "2", None])
def test_an_unknown_protocol_version_is_refused(version):
    with pytest.raises(DecodeError, match="protocol version"):
        decode_page(frame(version=version))


@pytest.mark.parametrize("kind", [0, 2, "page", None])
def test_a_frame_of_another_kind_is_refused(kind):
    with pytest.raises(DecodeError, match="expected a page"):
        decode_page(frame(kind=kind))


def test_page_deltas_must_be_an_array():
    data = msgpack.packb([PROTOCOL_VERSION, 1, ORIGIN, 0, {"a": 1}])
    with pytest.raises(DecodeError, match="deltas must be an array"):
        decode_page(data)


@pytest.mark.parametrize(
    "entry", [None, 5, [2, 1, "r1"], [2, 1, "r1", None], [2, 1, "r1", None, None, 1], {"a": 1}]
)
def test_a_delta_must_be_an_array_of_five(entry):
    with pytest.raises(DecodeError, match="array of 5"):
        decode_page(frame([entry]))


@pytest.mark.parametrize("rest", [5, "values", True, {"a": 1}])
def test_delta_values_must_be_an_array_or_nil(rest):
    with pytest.raises(DecodeError, match="array or nil"):
        decode_page(frame([[FACTS.code, 1, "r1", rest, None]]))


@pytest.mark.parametrize("code", [0, 8, 99, -1, "facts", True, 2.0, None])
def test_an_unknown_table_code_is_a_schema_error(code):
    with pytest.raises(SchemaError, match="unknown table code"):
        decode_page(frame([[code, 1, "r1", None, None]]))


@pytest.mark.parametrize(
    "column",
    [
        {"created_at": "1700000000000"},  # string into an int column
        {"subject": b"alice"},  # bytes into a text column
        {"created_at": True},  # bool into an int column
        {"created_at": 2**63},  # beyond signed 64 bits
        {"created_at": 2**64 - 1},
        {"confidence": math.nan},
        {"confidence": math.inf},
        {"confidence": 1},  # an int is not coerced into a real column
        {"archived": 0},  # nor into a bool column
        {"object": ["nested"]},
        {"object": {"k": "v"}},
        {"subject": None},  # null into a non-nullable column
        {"subject": "a\x00b"},
        {"source_episode": 5},  # a nullable column still checks its type
    ],
)
def test_a_wrongly_typed_value_is_a_schema_error(column):
    with pytest.raises(SchemaError):
        decode_page(frame([fact_entry(**column)]))


@pytest.mark.parametrize("row_id", [None, 7, b"r1", "x" * 129])
def test_a_bad_row_id_is_a_schema_error(row_id):
    with pytest.raises(SchemaError):
        decode_page(frame([[FACTS.code, 1, row_id, None, None]]))


def test_a_wrong_number_of_values_is_a_schema_error():
    entry = [FACTS.code, 1, "r1", FACT_REST[:-1], None]
    with pytest.raises(SchemaError, match="columns"):
        decode_page(frame([entry]))


@pytest.mark.parametrize(
    "stamps",
    [(1, 1), (2, 1), (0,)],
    ids=["repeated", "decreasing", "zero"],
)
def test_a_page_whose_stamps_do_not_increase_is_a_protocol_error(stamps):
    with pytest.raises(ProtocolError) as excinfo:
        decode_page(frame([fact_entry(hlc=h) for h in stamps]))
    assert excinfo.type is ProtocolError


def test_a_page_stamp_at_its_cursor_is_a_protocol_error():
    with pytest.raises(ProtocolError, match="above its cursor") as excinfo:
        decode_page(frame([fact_entry(hlc=5)], after=5))
    assert excinfo.type is ProtocolError


@pytest.mark.parametrize("hlc", [True, 1.5, "1", None, MAX_PACKED + 1, 2**64 - 1, -1])
def test_a_bad_stamp_is_a_protocol_error(hlc):
    with pytest.raises(ProtocolError) as excinfo:
        decode_page(frame([fact_entry(hlc=hlc)]))
    assert excinfo.type is ProtocolError


@pytest.mark.parametrize("origin", ["A" * 32, "a" * 31, 5, None, b"a" * 32])
def test_a_malformed_origin_is_a_protocol_error(origin):
    with pytest.raises(ProtocolError, match="malformed node id") as excinfo:
        decode_page(frame([fact_entry()], origin=origin))
    assert excinfo.type is ProtocolError


@pytest.mark.parametrize("after", [True, -1, 1.0, None, MAX_PACKED + 1])
def test_a_bad_cursor_is_a_protocol_error(after):
    with pytest.raises(ProtocolError) as excinfo:
        decode_page(frame(after=after))
    assert excinfo.type is ProtocolError


def test_a_page_of_max_page_deltas_is_accepted():
    entries = [[FACTS.code, h, f"r{h}", None, None] for h in range(1, MAX_PAGE_DELTAS + 1)]
    assert len(decode_page(frame(entries)).deltas) == MAX_PAGE_DELTAS


def test_a_page_of_more_than_max_page_deltas_is_a_protocol_error():
    entries = [[FACTS.code, h, f"r{h}", None, None] for h in range(1, MAX_PAGE_DELTAS + 2)]
    with pytest.raises(ProtocolError, match=f"at most {MAX_PAGE_DELTAS}") as excinfo:
        decode_page(frame(entries))
    assert excinfo.type is ProtocolError


def test_every_decoded_delta_carries_the_page_origin():
    page = decode_page(frame([fact_entry(hlc=1), [FACTS.code, 2, "r2", None, None]]))
    assert {d.origin for d in page.deltas} == {ORIGIN}
    assert page.deltas[0].values == ("r1", *FACT_REST)
