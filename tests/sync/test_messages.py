"""Wire messages: every kind survives encode then decode, and every field is validated."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given, settings, strategies as st

from feral.sync.codec import KIND_PAGE, PROTOCOL_VERSION, decode_message, encode_message
from feral.sync.delta import Page
from feral.sync.errors import DecodeError, FeralError, ProtocolError
from feral.sync.hlc import MAX_PACKED
from feral.sync.messages import (
    MAX_ERROR_TEXT,
    MAX_NAME,
    MAX_ORIGINS,
    NONCE_BYTES,
    Ack,
    Auth,
    CaughtUp,
    ErrorMessage,
    Hello,
    Pending,
    Vector,
)
from feral.sync.types import NodeId

from .strategies import node_ids, pages

NODE = NodeId("a" * 32)
OTHER = NodeId("b" * 32)
WALL = 1_700_000_000_000

chars = st.characters(exclude_categories=["Cs"])
"""Any character msgpack can carry as UTF-8 (lone surrogates cannot be encoded)."""

hellos = st.builds(
    Hello,
    node_id=node_ids,
    public_key=st.binary(min_size=32, max_size=32),
    schema_version=st.integers(1, 1 << 16),
    epoch=st.text(chars, max_size=64),
    wall_ms=st.integers(0, 1 << 47),
    nonce=st.binary(min_size=NONCE_BYTES, max_size=NONCE_BYTES),
    name=st.text(chars, max_size=MAX_NAME),
)
vectors = st.dictionaries(node_ids, st.integers(0, MAX_PACKED), max_size=8)
messages = st.one_of(
    hellos,
    st.builds(Auth, st.binary(min_size=64, max_size=64)),
    st.builds(Vector, vectors),
    st.builds(Ack, node_ids, st.integers(0, MAX_PACKED)),
    st.builds(CaughtUp, vectors),
    st.builds(ErrorMessage, st.text(chars, max_size=64), st.text(chars, max_size=MAX_ERROR_TEXT)),
    pages(max_deltas=3),
)


def hello(**fields: object) -> Hello:
    base: dict[str, object] = {
        "node_id": NODE,
        "public_key": b"k" * 32,
        "schema_version": 1,
        "epoch": "0123456789abcdef",
        "wall_ms": WALL,
        "nonce": b"n" * NONCE_BYTES,
        "name": "laptop",
    }
    base.update(fields)
    return Hello(**base)  # type: ignore[arg-type]


def raw(kind: object, *fields: object, version: object = PROTOCOL_VERSION) -> bytes:
    """A frame built by hand, so it can be wrong in exactly one way."""
    data: bytes = msgpack.packb([version, kind, *fields], use_bin_type=True)
    return data


def with_field(message: Hello | Auth | Vector | Ack | CaughtUp | ErrorMessage, index: int,
               value: object) -> bytes:  # fmt: skip
    fields = message.to_fields()
    fields[index] = value
    return raw(message.KIND, *fields)


# -- round trips -------------------------------------------------------------------------------


@settings(max_examples=300)
@given(messages)
def test_every_message_survives_encode_then_decode(message):
    assert decode_message(encode_message(message)) == message


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        (Page(NODE, 0, ()), KIND_PAGE),
        (hello(), 2),
        (Auth(b"s" * 64), 3),
        (Vector({NODE: 1}), 4),
        (Ack(NODE, 7), 5),
        (CaughtUp({NODE: 1}), 6),
        (ErrorMessage("not_paired", "pair first"), 7),
    ],
)
def test_every_frame_is_one_array_of_version_kind_and_fields(message, kind):
    obj = msgpack.unpackb(encode_message(message))
    assert obj[:2] == [PROTOCOL_VERSION, kind]


def test_a_hello_is_laid_out_as_documented():
    assert msgpack.unpackb(encode_message(hello())) == [
        PROTOCOL_VERSION, 2, NODE, b"k" * 32, 1, "0123456789abcdef", WALL,
        b"n" * NONCE_BYTES, "laptop", 3, 3,
    ]  # fmt: skip


def test_a_vector_is_sent_with_its_origins_in_sorted_order():
    obj = msgpack.unpackb(encode_message(Vector({OTHER: 2, NODE: 1})))
    assert obj == [PROTOCOL_VERSION, 4, {NODE: 1, OTHER: 2}]
    assert list(obj[2]) == [NODE, OTHER]


def test_a_caught_up_is_a_vector_then_log_entry_counts_then_a_row_digest():
    encoded = encode_message(CaughtUp({NODE: 5}, {NODE: 3}, b"d" * 32))
    assert msgpack.unpackb(encoded) == [PROTOCOL_VERSION, 6, {NODE: 5}, {NODE: 3}, b"d" * 32]


def test_a_caught_up_round_trips_its_entry_counts_and_digests():
    message = CaughtUp({NODE: 5, OTHER: 9}, {NODE: 3, OTHER: 1}, b"\x00" * 32)
    assert decode_message(encode_message(message)) == message


@pytest.mark.parametrize("digest", [b"d" * 31, b"d" * 33, "d" * 32, None, 5, {}])
def test_a_row_digest_must_be_32_bytes_or_empty(digest):
    with pytest.raises(DecodeError, match="row digest"):
        decode_message(raw(CaughtUp.KIND, {NODE: 1}, {NODE: 1}, digest))


def test_a_pending_is_a_count_of_entries():
    assert msgpack.unpackb(encode_message(Pending(12))) == [PROTOCOL_VERSION, 8, 12]
    assert decode_message(encode_message(Pending(0))) == Pending(0)
    for wrong in (-1, True, 1.5, None):
        with pytest.raises(DecodeError, match="pending entries"):
            decode_message(raw(Pending.KIND, wrong))


@pytest.mark.parametrize("message", [Vector({}), CaughtUp({})])
def test_an_empty_vector_round_trips(message):
    assert decode_message(encode_message(message)) == message


def test_a_vector_of_max_origins_fits_in_a_frame_and_round_trips():
    vector = {
        NodeId(f"{i:032b}".replace("0", "a").replace("1", "b")): i for i in range(MAX_ORIGINS)
    }
    assert len(vector) == MAX_ORIGINS
    assert decode_message(encode_message(Vector(vector))) == Vector(vector)


def test_boundary_values_are_accepted():
    edge = hello(schema_version=1 << 16, wall_ms=1 << 47, epoch="e" * 64, name="n" * MAX_NAME)
    assert decode_message(encode_message(edge)) == edge
    assert decode_message(encode_message(hello(schema_version=1, wall_ms=0, epoch="", name="")))
    assert decode_message(encode_message(Ack(NODE, MAX_PACKED))) == Ack(NODE, MAX_PACKED)
    long = ErrorMessage("c" * 64, "m" * MAX_ERROR_TEXT)
    assert decode_message(encode_message(long)) == long


# -- version and kind --------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2, 4, -1, "3", None, [3], b"\x03"])
def test_a_frame_of_another_protocol_version_is_refused(version):
    with pytest.raises(DecodeError, match="protocol version"):
        decode_message(raw(4, {}, version=version))


@pytest.mark.parametrize("version", [0, -1, "3", None, [3], b"\x03", (1 << 16) + 1])
def test_a_hello_or_error_of_no_protocol_version_is_refused(version):
    """Hello and Error are read at any version (sync/versions.py), but a version it must be."""
    for kind, fields in ((7, ("code", "text")), (2, hello().to_fields())):
        with pytest.raises(DecodeError, match="protocol version"):
            decode_message(raw(kind, *fields, version=version))


@pytest.mark.parametrize("version", [3.0])
def test_a_version_that_only_equals_an_integer_is_refused(version):
    with pytest.raises(DecodeError, match="protocol version"):
        decode_message(raw(7, "code", "text", version=version))


@pytest.mark.parametrize("kind", [0, 12, 99, -1, 2**40])
def test_an_unknown_message_kind_is_refused(kind):
    with pytest.raises(DecodeError, match="unknown message kind"):
        decode_message(raw(kind))


@pytest.mark.parametrize("kind", [True, 1.0, 2.0, "hello", None, [2]])
def test_a_message_kind_that_is_not_an_integer_is_refused(kind):
    with pytest.raises(DecodeError, match="kind"):
        decode_message(raw(kind, NODE, 0, []))


@pytest.mark.parametrize(
    "obj", [None, 1, "hello", b"\x01\x02", {"version": 1}, [], [PROTOCOL_VERSION]]
)
def test_a_frame_that_is_not_an_array_of_version_and_kind_is_refused(obj):
    with pytest.raises(DecodeError, match="array starting with version and kind"):
        decode_message(msgpack.packb(obj))


@pytest.mark.parametrize(
    ("message", "count"),
    [
        (hello(), 9),
        (Auth(b"s" * 64), 1),
        (Vector({}), 1),
        (Ack(NODE, 1), 2),
        (CaughtUp({}), 3),
        (ErrorMessage("c", "m"), 2),
        (Pending(1), 1),
    ],
)
def test_a_message_with_a_field_too_many_or_too_few_is_refused(message, count):
    fields = message.to_fields()
    assert len(fields) == count
    for wrong in (fields[:-1], [*fields, None]):
        with pytest.raises(DecodeError, match=f"expected {count}"):
            decode_message(raw(message.KIND, *wrong))


# -- fields ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("index", "value", "match"),
    [
        (1, b"k" * 31, "public key"),
        (1, b"k" * 33, "public key"),
        (1, "k" * 32, "public key"),
        (2, 0, "schema version"),
        (2, (1 << 16) + 1, "schema version"),
        (2, True, "schema version"),
        (2, 1.0, "schema version"),
        (2, "1", "schema version"),
        (3, "e" * 65, "epoch"),
        (3, b"epoch", "epoch"),
        (3, None, "epoch"),
        (4, -1, "wall clock"),
        (4, (1 << 47) + 1, "wall clock"),
        (4, float(WALL), "wall clock"),
        (4, None, "wall clock"),
        (5, b"n" * (NONCE_BYTES - 1), "nonce"),
        (5, b"n" * (NONCE_BYTES + 1), "nonce"),
        (5, "n" * NONCE_BYTES, "nonce"),
        (6, "n" * (MAX_NAME + 1), "name"),
        (6, 7, "name"),
        (7, 0, "lowest protocol version"),
        (7, True, "lowest protocol version"),
        (8, (1 << 16) + 1, "highest protocol version"),
        (8, 2, "protocol range"),
    ],
)
def test_each_hello_field_is_validated(index, value, match):
    with pytest.raises(DecodeError, match=match):
        decode_message(with_field(hello(), index, value))


@pytest.mark.parametrize("node_id", ["a" * 31, "a" * 33, "A" * 32, "1" * 32, b"a" * 32, None, 5])
def test_a_malformed_node_id_in_a_hello_is_a_protocol_error(node_id):
    with pytest.raises(ProtocolError, match="malformed node id"):
        decode_message(with_field(hello(), 0, node_id))


@pytest.mark.parametrize("signature", [b"s" * 63, b"s" * 65, b"", "s" * 64, None])
def test_an_auth_signature_must_be_64_bytes(signature):
    with pytest.raises(DecodeError, match="signature"):
        decode_message(raw(Auth.KIND, signature))


def tail(cls: type) -> list[object]:
    """The fields after the vector: a CaughtUp also carries its (empty) counts and digests."""
    return [{}, b""] if cls is CaughtUp else []


@pytest.mark.parametrize("cls", [Vector, CaughtUp])
@pytest.mark.parametrize("value", [[], [[NODE, 1]], None, "vector", 3])
def test_a_vector_must_be_a_map(cls, value):
    with pytest.raises(DecodeError, match="map of at most"):
        decode_message(raw(cls.KIND, value, *tail(cls)))


@pytest.mark.parametrize("cls", [Vector, CaughtUp])
@pytest.mark.parametrize("entry", [-1, MAX_PACKED + 1, True, 1.0, "1", None])
def test_a_vector_entry_must_be_a_packed_stamp(cls, entry):
    with pytest.raises(DecodeError, match="vector entry"):
        decode_message(raw(cls.KIND, {NODE: entry}, *tail(cls)))


@pytest.mark.parametrize("cls", [Vector, CaughtUp])
def test_a_vector_keyed_by_a_malformed_node_id_is_a_protocol_error(cls):
    with pytest.raises(ProtocolError, match="malformed node id"):
        decode_message(raw(cls.KIND, {"not-a-node": 1}, *tail(cls)))


def test_a_vector_keyed_by_bytes_is_a_protocol_error():
    with pytest.raises(ProtocolError, match="malformed node id"):
        decode_message(raw(Vector.KIND, {NODE.encode(): 1}))


def test_a_vector_of_more_than_max_origins_is_refused():
    vector = {f"{i:032b}".replace("0", "a").replace("1", "b"): 1 for i in range(MAX_ORIGINS + 1)}
    with pytest.raises(DecodeError, match=f"at most {MAX_ORIGINS}"):
        decode_message(raw(Vector.KIND, vector))


@pytest.mark.parametrize("hlc", [-1, MAX_PACKED + 1, True, 1.0, "1", None])
def test_an_ack_stamp_must_be_a_packed_stamp(hlc):
    with pytest.raises(DecodeError, match="ack hlc"):
        decode_message(raw(Ack.KIND, NODE, hlc))


def test_an_ack_for_a_malformed_origin_is_a_protocol_error():
    with pytest.raises(ProtocolError, match="malformed node id"):
        decode_message(raw(Ack.KIND, "origin", 1))


@pytest.mark.parametrize(
    ("code", "text", "match"),
    [
        ("c" * 65, "m", "error code"),
        (7, "m", "error code"),
        (None, "m", "error code"),
        ("c", "m" * (MAX_ERROR_TEXT + 1), "error text"),
        ("c", b"m", "error text"),
        ("c", None, "error text"),
    ],
)
def test_an_error_message_has_a_short_code_and_a_bounded_text(code, text, match):
    with pytest.raises(DecodeError, match=match):
        decode_message(raw(ErrorMessage.KIND, code, text))


def test_a_field_of_a_type_msgpack_cannot_carry_is_refused_when_encoding():
    with pytest.raises(DecodeError, match="cannot encode"):
        encode_message(hello(wall_ms=2**64))


junk_fields = st.lists(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.text(max_size=4)
    | st.binary(max_size=40),
    max_size=8,
)


@settings(max_examples=200)
@given(st.integers(2, 7), junk_fields)
def test_message_shaped_junk_is_refused_with_feral_errors_only(kind, fields):
    try:
        decode_message(raw(kind, *fields))
    except FeralError:
        pass
