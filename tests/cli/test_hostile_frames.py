"""Hostile ``/sync`` frames before authentication, against one real ``feral serve`` process.

Each case opens a raw WebSocket, reads the server's Hello, sends something a peer must not send,
and expects one typed error frame and a close code (DESIGN §5: 1002 protocol, 1007 bad data,
1008 policy, 1009 too big). Frames the WebSocket layer itself refuses get its close code and no
error frame. After every case a paired client still completes a handshake, and the last test
syncs through ``feral sync now`` and finds the server's rows unchanged.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future

import msgpack
import pytest

from feral.sync.codec import (
    KIND_PAGE,
    MAX_FRAME_BYTES,
    PROTOCOL_VERSION,
    decode_message,
    encode_message,
)
from feral.sync.delta import Page
from feral.sync.messages import Auth, ErrorMessage, Hello, Pending, Vector
from feral.sync.schema import SCHEMA_VERSION
from feral.sync.session import SyncSession

from .hostile_support import (
    Frames,
    Target,
    assert_outcome,
    assert_still_serving,
    assert_synced_and_unchanged,
    authenticate,
    fresh_identity,
    handshake,
    hello_for,
    hello_frame,
    local_peer,
    now_ms,
    open_sync,
    pack,
    provoke,
    receive,
    stamp,
)
from .raw_websocket import (
    OP_BINARY,
    OP_CLOSE,
    OP_CONTINUATION,
    OP_PING,
    OP_TEXT,
    close_code_of,
    deflate_bomb,
    fragments,
    frame_bytes,
    open_raw,
)
from .slow_peers import SlowPeers


@pytest.fixture(params=["ws", "wss"])
def target(request: pytest.FixtureRequest) -> Target:
    """The shared server (tests/cli/conftest.py), with the slow peers already hanging on it;
    every case runs again against the same server over TLS (``wss``)."""
    if request.param == "wss":
        return request.getfixturevalue("hostile_tls_target")
    slow: Future[SlowPeers] = request.getfixturevalue("slow_peers")
    assert slow is not None
    return request.getfixturevalue("hostile_target")


def hello_fields(target: Target, index: int, value: object) -> Frames:
    """A Hello with field ``index`` replaced by ``value``, packed by hand."""
    fields = hello_for(target.identity).to_fields()
    fields[index] = value
    return lambda _: [pack(PROTOCOL_VERSION, Hello.KIND, *fields)]


Case = Callable[[Target], Awaitable[Frames]]


# -- not a message of this protocol ------------------------------------------------------------


async def garbage(target: Target) -> Frames:
    return lambda _: [b"\xc1\xff this is not msgpack \x00\x01"]


async def empty_frame(target: Target) -> Frames:
    return lambda _: [b""]


async def truncated(target: Target) -> Frames:
    frame = hello_frame(target)
    return lambda _: [frame[: len(frame) // 2]]


async def trailing_bytes(target: Target) -> Frames:
    frame = hello_frame(target)
    return lambda _: [frame + b"\xc0"]


async def text(target: Target) -> Frames:
    return lambda _: ["hello, I am a browser"]


async def map_not_array(target: Target) -> Frames:
    return lambda _: [msgpack.packb({"version": PROTOCOL_VERSION, "kind": Hello.KIND})]


async def unknown_kind(target: Target) -> Frames:
    return lambda _: [pack(PROTOCOL_VERSION, 99, "what is this")]


async def kind_as_text(target: Target) -> Frames:
    return lambda _: [pack(PROTOCOL_VERSION, "hello", *hello_for(target.identity).to_fields())]


async def wrong_version(target: Target) -> Frames:
    hello = hello_for(target.identity)
    return lambda _: [pack(PROTOCOL_VERSION + 41, Hello.KIND, *hello.to_fields())]


async def ext_type(target: Target) -> Frames:
    return lambda _: [pack(PROTOCOL_VERSION, Hello.KIND, msgpack.ExtType(42, b"payload"))]


async def timestamp(target: Target) -> Frames:
    return hello_fields(target, 4, msgpack.Timestamp(int(time.time()), 0))


async def deep_nesting(target: Target) -> Frames:
    return lambda _: [b"\x93\x01\x04" + b"\x91" * 100_000 + b"\xc0"]


async def duplicate_keys(target: Target) -> Frames:
    return lambda _: [b"\x93\x01\x04\x82\xa1a\x01\xa1a\x02"]


async def invalid_utf8(target: Target) -> Frames:
    return lambda _: [b"\x93\x01\x02\xa2\xff\xfe"]  # [1, 2, str of two bytes that are not UTF-8]


async def lone_surrogate(target: Target) -> Frames:
    return lambda _: [b"\x93\x01\x02\xa3\xed\xa0\x80"]  # U+D800 encoded: not Unicode text


# -- a Hello with a field of the wrong shape ---------------------------------------------------


async def hello_missing_field(target: Target) -> Frames:
    fields = hello_for(target.identity).to_fields()
    return lambda _: [pack(PROTOCOL_VERSION, Hello.KIND, *fields[:-1])]


async def wall_clock_as_text(target: Target) -> Frames:
    return hello_fields(target, 4, "five past noon")


async def wall_clock_beyond_uint64_range(target: Target) -> Frames:
    return hello_fields(target, 4, (1 << 64) - 1)


async def short_public_key(target: Target) -> Frames:
    return hello_fields(target, 1, target.identity.public_key[:31])


async def huge_name(target: Target) -> Frames:
    return hello_fields(target, 6, "n" * (3 * 1024 * 1024))


async def sql_node_id(target: Target) -> Frames:
    return hello_fields(target, 0, "x'); DROP TABLE peer_status; --")


async def non_ascii_node_id(target: Target) -> Frames:
    """Echoed in the refusal: the close reason must still fit a control frame (125 bytes)."""
    return hello_fields(target, 0, "é" * 200)


async def huge_error_text(target: Target) -> Frames:
    return lambda _: [pack(PROTOCOL_VERSION, ErrorMessage.KIND, "nope", "e" * 100_000)]


# -- a well-formed Hello the server must refuse ------------------------------------------------


async def far_future_wall_clock(target: Target) -> Frames:
    hello = hello_for(target.identity, wall_ms=now_ms() + 86_400_000)
    return lambda _: [encode_message(hello)]


async def far_past_wall_clock(target: Target) -> Frames:
    return lambda _: [encode_message(hello_for(target.identity, wall_ms=0))]


async def other_schema(target: Target) -> Frames:
    return hello_fields(target, 2, SCHEMA_VERSION + 1)


async def foreign_node_id(target: Target) -> Frames:
    other = fresh_identity().node_id
    return lambda _: [encode_message(hello_for(target.identity, node_id=other))]


async def spoofed_paired_id(target: Target) -> Frames:
    """A stranger's key under the paired client's id: the id is not the key's fingerprint."""
    stranger = fresh_identity()
    return lambda _: [encode_message(hello_for(stranger, node_id=target.client_id))]


async def unpaired_key(target: Target) -> Frames:
    stranger = fresh_identity()
    return lambda _: [encode_message(hello_for(stranger))]


async def server_own_identity(target: Target) -> Frames:
    def frames(server: Hello) -> Sequence[bytes | str]:
        hello = Hello(server.node_id, server.public_key, SCHEMA_VERSION, "probe-epoch",
                      now_ms(), secrets.token_bytes(32), "probe")  # fmt: skip
        return [encode_message(hello)]

    return frames


# -- out of order, forged or replayed ----------------------------------------------------------


async def auth_before_hello(target: Target) -> Frames:
    return lambda _: [encode_message(Auth(secrets.token_bytes(64)))]


async def vector_before_auth(target: Target) -> Frames:
    return lambda _: [hello_frame(target), encode_message(Vector({}))]


async def page_before_auth(target: Target) -> Frames:
    entry = [2, stamp(), "f" + "0" * 31, ["s", "p", "o", 1.0, None, now_ms(), False], None]
    page = pack(PROTOCOL_VERSION, KIND_PAGE, target.client_id, 0, [entry])
    return lambda _: [hello_frame(target), page]


async def second_hello(target: Target) -> Frames:
    return lambda _: [hello_frame(target), hello_frame(target)]


async def forged_signature(target: Target) -> Frames:
    return lambda _: [hello_frame(target), encode_message(Auth(secrets.token_bytes(64)))]


async def replayed_handshake(target: Target) -> Frames:
    recorded = await handshake(target)
    assert len(recorded) == 2
    return lambda _: recorded


async def error_from_peer(target: Target) -> Frames:
    """The peer refuses us: the server stops and closes normally, without an error of its own."""
    return lambda _: [encode_message(ErrorMessage("not_paired", "I do not know you"))]


# -- too big -----------------------------------------------------------------------------------


async def just_over_frame_cap(target: Target) -> Frames:
    return lambda _: [b"\x00" * (MAX_FRAME_BYTES + 1)]  # under the WebSocket cap: the codec's


CASES: list[tuple[Case, str | None, int]] = [
    (garbage, "bad_frame", 1007),
    (empty_frame, "bad_frame", 1007),
    (truncated, "bad_frame", 1007),
    (trailing_bytes, "bad_frame", 1007),
    (text, "bad_frame", 1007),
    (map_not_array, "bad_frame", 1007),
    (unknown_kind, "bad_frame", 1007),
    (kind_as_text, "bad_frame", 1007),
    (wrong_version, "bad_frame", 1007),
    (ext_type, "bad_frame", 1007),
    (timestamp, "bad_frame", 1007),
    (deep_nesting, "bad_frame", 1007),
    (duplicate_keys, "bad_frame", 1007),
    (invalid_utf8, "bad_frame", 1007),
    (lone_surrogate, "bad_frame", 1007),
    (hello_missing_field, "bad_frame", 1007),
    (wall_clock_as_text, "bad_frame", 1007),
    (wall_clock_beyond_uint64_range, "bad_frame", 1007),
    (short_public_key, "bad_frame", 1007),
    (huge_name, "bad_frame", 1007),
    (sql_node_id, "protocol_error", 1002),
    (non_ascii_node_id, "protocol_error", 1002),
    (huge_error_text, "bad_frame", 1007),
    (far_future_wall_clock, "clock_skew", 1008),
    (far_past_wall_clock, "clock_skew", 1008),
    (other_schema, "schema_mismatch", 1008),
    (foreign_node_id, "auth_failed", 1008),
    (spoofed_paired_id, "auth_failed", 1008),
    (unpaired_key, "not_paired", 1008),
    (server_own_identity, "same_node", 1008),
    (auth_before_hello, "protocol_error", 1002),
    (vector_before_auth, "protocol_error", 1002),
    (page_before_auth, "protocol_error", 1002),
    (second_hello, "protocol_error", 1002),
    (forged_signature, "auth_failed", 1008),
    (replayed_handshake, "auth_failed", 1008),
    (error_from_peer, None, 1000),
    (just_over_frame_cap, "bad_frame", 1007),
]


@pytest.mark.parametrize(
    ("case", "code", "close_code"), CASES, ids=[case.__name__ for case, _, _ in CASES]
)
async def test_a_hostile_frame_is_refused_and_the_server_keeps_serving(
    target, case, code, close_code
):
    frames = await case(target)
    outcome = await provoke(target, frames)

    assert_outcome(outcome, code, close_code)
    assert_still_serving(target)
    assert len(await handshake(target)) == 2  # a paired peer is still served


MIB = 1024 * 1024
OVER_THE_WEBSOCKET_CAP = MAX_FRAME_BYTES + 2 * 1024
"""The WebSocket layer takes the frame cap plus 1 KiB of slack (docs/PROTOCOL.md §1)."""

WEBSOCKET_CASES: list[tuple[str, Callable[[], list[bytes]], int]] = [
    ("compression_bomb", lambda: [frame_bytes(deflate_bomb(64 * MIB), rsv1=True)], 1002),
    ("oversized", lambda: [frame_bytes(bytes(OVER_THE_WEBSOCKET_CAP))], 1009),
    ("oversized_in_fragments", lambda: fragments(bytes(MIB), 6), 1009),  # each one is small
    ("invalid_utf8_text", lambda: [frame_bytes(b"\xff\xfe", opcode=OP_TEXT)], 1007),
    ("unmasked_frame", lambda: [frame_bytes(b"\x92\x01\x04", masked=False)], 1002),
    ("reserved_opcode", lambda: [frame_bytes(b"what is this", opcode=0x3)], 1002),
    ("orphan_continuation", lambda: [frame_bytes(b"\x93\x01", opcode=OP_CONTINUATION)], 1002),
    ("ping_too_long", lambda: [frame_bytes(bytes(200), opcode=OP_PING)], 1002),
]


@pytest.mark.parametrize(
    ("frames", "close_code"),
    [(frames, code) for _, frames, code in WEBSOCKET_CASES],
    ids=[name for name, _, _ in WEBSOCKET_CASES],
)
async def test_a_frame_the_websocket_layer_refuses_closes_the_link_and_nothing_else(
    target, frames, close_code
):
    """No compression is negotiated, so a compressed frame (a bomb or not) is a protocol error
    before anything inflates it; oversized and broken framing never reach the sync protocol, so
    the WebSocket layer's close code is the whole answer."""
    raw = await open_raw(target.server.port, extensions="permessage-deflate", tls=target.server.tls)
    try:
        assert "sec-websocket-extensions" not in raw.response.lower(), raw.response
        opcode, hello = await raw.receive()
        assert opcode == OP_BINARY and hello  # the server's Hello
        with contextlib.suppress(ConnectionError):  # the server may hang up mid-message
            for frame in frames():
                await raw.send_raw(frame)
        opcode, payload = await raw.receive()
        assert opcode == OP_CLOSE, (opcode, payload[:80])  # no error frame before it
        assert close_code_of(payload) == close_code, payload
    finally:
        await raw.aclose()
    assert_still_serving(target)
    assert len(await handshake(target)) == 2


async def test_a_paired_link_stays_open_while_another_connection_is_refused(target):
    async with open_sync(target.url) as ws:
        await authenticate(ws, SyncSession(local_peer(target.identity)))

        outcome = await provoke(target, await garbage(target))
        assert_outcome(outcome, "bad_frame", 1007)

        await ws.send(encode_message(Vector({})))  # "I hold nothing": the server streams its rows
        announced = decode_message(await receive(ws))  # how many, first (protocol 2)
        assert isinstance(announced, Pending) and announced.entries > 0, announced
        page = decode_message(await receive(ws))
        assert isinstance(page, Page) and page.deltas
        assert page.origin == target.server.node_id


def test_after_every_hostile_frame_a_paired_sync_works_and_the_rows_are_unchanged(target):
    assert_synced_and_unchanged(target)
