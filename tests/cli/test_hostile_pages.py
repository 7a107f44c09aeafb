"""Hostile frames after a successful handshake, against one real ``feral serve`` process.

The probe authenticates with a paired key, so every check that guards the database is reached:
each case is a page (or vector, ack, caught-up, replayed handshake message) that a peer must
not send. Each must end in one typed error frame and the right close code, and leave the
server's rows, clock and version vector exactly as they were (DESIGN §5: "leaves the database
untouched"). The HTTP API on the same port is probed for the one thing vectors could sneak in by.
"""

from __future__ import annotations

import asyncio
import json
import math
import secrets
import struct
from collections.abc import Callable
from concurrent.futures import Future

import pytest

from feral.node.links.peer import NO_PROGRESS_TIMEOUT_S
from feral.node.settings.config import SyncSettings
from feral.sync.codec import (
    KIND_PAGE,
    MAX_FRAME_BYTES,
    PROTOCOL_VERSION,
    decode_message,
    decode_page,
    encode_message,
)
from feral.sync.delta import MAX_PAGE_DELTAS
from feral.sync.hlc import MAX_PACKED
from feral.sync.messages import Ack, Auth, CaughtUp, Vector
from feral.sync.schema import FACTS
from feral.sync.session import MAX_PAGES_IN_FLIGHT, SyncSession

from .hostile_support import (
    SERVER_FACT,
    Target,
    assert_outcome,
    assert_still_serving,
    assert_synced_and_unchanged,
    authenticate,
    handshake,
    hello_frame,
    http_call,
    local_peer,
    now_ms,
    open_sync,
    pack,
    provoke,
    receive,
    server_state,
    stamp,
)
from .raw_websocket import OP_BINARY
from .slow_peers import BULK_FACTS, SLACK_S, SlowPeers

ROW_ID = "f" + "e" * 31
HOUR_MS = 3_600_000
MAX_RSS_GROWTH_BYTES = 50 * 1024 * 1024


@pytest.fixture
def target(hostile_target: Target, slow_peers: Future[SlowPeers]) -> Target:
    """The shared server (tests/cli/conftest.py), with the slow peers already hanging on it."""
    return hostile_target


def fact(**changes: object) -> list[object]:
    """A fact's values after its id, in wire order, with ``changes`` applied."""
    values: dict[str, object] = {
        "subject": "probe", "predicate": "says", "object": "a hostile fact",
        "confidence": 1.0, "source_episode": None, "created_at": now_ms(), "archived": False,
    }  # fmt: skip
    assert set(changes) <= set(values), changes
    return list({**values, **changes}.values())


def entry(*, code: object = FACTS.code, hlc: object = None, row_id: object = ROW_ID,
          rest: object = None) -> list[object]:  # fmt: skip
    """One delta as the wire carries it: ``[table code, hlc, row id, values after the id,
    prior]`` (nil: a first write)."""
    return [code, stamp() if hlc is None else hlc, row_id, fact() if rest is None else rest, None]


def page(target: Target, *entries: object, origin: object = None, after: object = 0) -> bytes:
    """A page of the probe's (the paired client's) own writes, packed by hand."""
    origin = target.client_id if origin is None else origin
    return pack(PROTOCOL_VERSION, KIND_PAGE, origin, after, list(entries or [entry()]))


def one(target: Target, **fields: object) -> list[bytes]:
    return [page(target, entry(**fields))]


def with_fact(**changes: object) -> Callable[[Target], list[bytes]]:
    return lambda target: one(target, rest=fact(**changes))


def nested(depth: int) -> object:
    value: object = "bottom"
    for _ in range(depth):
        value = [value]
    return value


def sql_table_name(t: Target) -> list[bytes]:
    return one(t, code='facts" (id) VALUES (1); DROP TABLE "facts"; --')


def sql_column_names(t: Target) -> list[bytes]:
    return one(t, rest={'object"; DROP TABLE facts; --': "x", "confidence": 1.0})


def far_future_after_a_valid_delta(t: Target) -> list[bytes]:
    """The whole page is refused: the valid delta before the bad one is not applied either."""
    return [page(t, entry(hlc=stamp()), entry(hlc=stamp(HOUR_MS), row_id="f" + "d" * 31))]


def stamps_not_increasing(t: Target) -> list[bytes]:
    later = stamp()
    return [page(t, entry(hlc=later), entry(hlc=later - 1, row_id="f" + "d" * 31))]


def gap(t: Target) -> list[bytes]:
    """Continues from a stamp the server never got: applying it would leave a hole."""
    cursor = stamp(-1000)
    return [page(t, entry(hlc=cursor + 1), after=cursor)]


def too_many_deltas(t: Target) -> list[bytes]:
    start = stamp()
    rows = [entry(hlc=start + n, row_id=f"f{n:031x}") for n in range(MAX_PAGE_DELTAS + 1)]
    return [page(t, *rows)]


def tombstone_beside_values(t: Target) -> list[bytes]:
    return [page(t, [*entry(), True])]  # a sixth item: "deleted", next to the prior


def replayed_hello(t: Target) -> list[bytes]:
    return [hello_frame(t)]


def replayed_auth(t: Target) -> list[bytes]:
    return [encode_message(Auth(secrets.token_bytes(64)))]


def sql_origin(t: Target) -> list[bytes]:
    return [page(t, origin="x'; DROP TABLE delta_log; --")]


def ack_for_a_page_never_sent(t: Target) -> list[bytes]:
    return [encode_message(Ack(t.server.node_id, stamp()))]


def ack_stamp_beyond_int64(t: Target) -> list[bytes]:
    return [pack(PROTOCOL_VERSION, Ack.KIND, t.server.node_id, 1 << 63)]


def vector_with_sql_origin(t: Target) -> list[bytes]:
    return [pack(PROTOCOL_VERSION, Vector.KIND, {"'; DROP TABLE facts; --": 0})]


def vector_entry_beyond_uint64(t: Target) -> list[bytes]:
    return [pack(PROTOCOL_VERSION, Vector.KIND, {t.client_id: (1 << 64) - 1})]


def caught_up_with_text_counts(t: Target) -> list[bytes]:
    return [pack(PROTOCOL_VERSION, CaughtUp.KIND, {}, {t.client_id: "many"})]


PageCase = Callable[[Target], list[bytes]]
EMBEDDING_BYTES = struct.pack("<385f", *[0.5] * 385)
"""A float32 embedding as a vector table would hold it (and of the wrong dimension)."""

CASES: list[tuple[str, PageCase, str, int]] = [
    # names: no table or column name ever reaches SQL
    ("unknown_table_code", lambda t: one(t, code=99), "bad_frame", 1007),
    ("sql_table_name", sql_table_name, "bad_frame", 1007),
    ("sql_column_names", sql_column_names, "bad_frame", 1007),
    # a newer schema's extra columns are kept opaque (PROTOCOL §10), but only plain values
    ("unknown_column_not_plain", lambda t: one(t, rest=[*fact(), b"\x00"]), "bad_frame", 1007),
    ("too_many_unknown_columns", lambda t: one(t, rest=[*fact(), *"x" * 17]), "bad_frame", 1007),
    ("missing_column", lambda t: one(t, rest=fact()[:-1]), "bad_frame", 1007),
    # values: the column's type exactly, never coerced
    ("text_in_integer_column", with_fact(created_at="yesterday"), "bad_frame", 1007),
    ("bool_in_integer_column", with_fact(created_at=True), "bad_frame", 1007),
    ("integer_beyond_int64", with_fact(created_at=1 << 63), "bad_frame", 1007),
    ("integer_in_real_column", with_fact(confidence=1), "bad_frame", 1007),
    ("nan_in_real_column", with_fact(confidence=math.nan), "bad_frame", 1007),
    ("infinity_in_real_column", with_fact(confidence=-math.inf), "bad_frame", 1007),
    ("vector_in_real_column", with_fact(confidence=[0.1] * 384), "bad_frame", 1007),
    ("embedding_bytes_in_text_column", with_fact(object=EMBEDDING_BYTES), "bad_frame", 1007),
    ("nan_vector_in_text_column", with_fact(object=[math.nan] * 384), "bad_frame", 1007),
    ("deep_nesting_in_values", with_fact(subject=nested(500)), "bad_frame", 1007),
    ("text_over_64_kib", with_fact(object="x" * 65_537), "bad_frame", 1007),
    ("nul_in_text", with_fact(object="before\x00after"), "bad_frame", 1007),
    ("huge_row_id", lambda t: one(t, row_id="f" * 4096), "bad_frame", 1007),
    ("row_id_as_integer", lambda t: one(t, row_id=12345), "bad_frame", 1007),
    ("tombstone_beside_values", tombstone_beside_values, "bad_frame", 1007),
    # stamps: in range, increasing, not from the future
    ("far_future_stamp", lambda t: one(t, hlc=stamp(HOUR_MS)), "clock_skew", 1008),
    ("far_future_after_a_valid_delta", far_future_after_a_valid_delta, "clock_skew", 1008),
    ("stamp_at_the_end_of_time", lambda t: one(t, hlc=MAX_PACKED), "clock_skew", 1008),
    ("stamp_beyond_int64", lambda t: one(t, hlc=MAX_PACKED + 1), "protocol_error", 1002),
    ("counter_carried_past_uint64", lambda t: one(t, hlc=(1 << 64) - 1), "protocol_error", 1002),
    ("stamp_zero", lambda t: one(t, hlc=0), "protocol_error", 1002),
    ("negative_stamp", lambda t: one(t, hlc=-stamp()), "protocol_error", 1002),
    ("stamp_as_float", lambda t: one(t, hlc=float(stamp())), "protocol_error", 1002),
    ("stamps_not_increasing", stamps_not_increasing, "protocol_error", 1002),
    ("cursor_beyond_int64", lambda t: [page(t, after=1 << 63)], "protocol_error", 1002),
    ("gap", gap, "protocol_error", 1002),
    ("too_many_deltas", too_many_deltas, "protocol_error", 1002),
    # origins and the other messages of an open link
    ("sql_origin", sql_origin, "protocol_error", 1002),
    ("ack_for_a_page_never_sent", ack_for_a_page_never_sent, "protocol_error", 1002),
    ("ack_stamp_beyond_int64", ack_stamp_beyond_int64, "bad_frame", 1007),
    ("vector_with_sql_origin", vector_with_sql_origin, "protocol_error", 1002),
    ("vector_entry_beyond_uint64", vector_entry_beyond_uint64, "bad_frame", 1007),
    ("caught_up_with_text_counts", caught_up_with_text_counts, "bad_frame", 1007),
    ("replayed_hello", replayed_hello, "protocol_error", 1002),
    ("replayed_auth", replayed_auth, "protocol_error", 1002),
]


@pytest.mark.parametrize(
    ("case", "code", "close_code"),
    [(case, code, close) for _, case, code, close in CASES],
    ids=[name for name, _, _, _ in CASES],
)
async def test_a_hostile_frame_after_the_handshake_is_refused_and_changes_nothing(
    target, case, code, close_code
):
    before = await server_state(target)
    frames = case(target)

    outcome = await provoke(target, lambda _: frames, authenticated=True)

    assert_outcome(outcome, code, close_code)
    assert await server_state(target) == before  # rows, clock and vector untouched
    assert_still_serving(target)
    assert len(await handshake(target)) == 2


def test_the_unbroken_page_the_cases_start_from_is_valid(target):
    """Each case breaks one thing: without it, the page decodes and passes every check."""
    decoded = decode_page(page(target))
    decoded.check()
    assert decoded.deltas[0].row_id == ROW_ID


async def test_a_forged_copy_of_the_server_s_own_write_is_acknowledged_and_changes_nothing(target):
    """Any paired peer may relay any origin, the server's own included (docs/PROTOCOL.md §11):
    an entry the server already holds is skipped on apply, whatever values the copy carries."""
    rows = [json.loads(line) for line in target.export.splitlines()]
    (own,) = [row for row in rows if row.get("object") == SERVER_FACT]
    assert own["origin"] == target.server.node_id
    forged = fact(subject="forged", object="not what the server wrote")
    frame = page(target, entry(hlc=own["hlc"], row_id=own["id"], rest=forged),
                 origin=target.server.node_id)  # fmt: skip
    before = await server_state(target)

    async with open_sync(target.url) as ws:
        await authenticate(ws, SyncSession(local_peer(target.identity)))
        await ws.send(frame)
        answer = decode_message(await receive(ws))

    assert answer == Ack(target.server.node_id, own["hlc"])
    assert await server_state(target) == before


HTTP_CASES: list[tuple[str, str, bytes, int, str]] = [
    ("remember_nan_embedding", "/api/memory/remember",
     b'{"fact": "probe", "embedding": [NaN, 0.5]}', 400, "bad_json"),
    ("remember_with_an_embedding", "/api/memory/remember",
     json.dumps({"fact": "probe", "embedding": [0.1] * 384}).encode(), 422, "invalid_request"),
    ("search_by_vector", "/api/memory/search",
     json.dumps({"query": "x", "vector": [0.1] * 385}).encode(), 422, "invalid_request"),
    ("search_nan_alpha", "/api/memory/search",
     b'{"query": "x", "alpha": NaN}', 400, "bad_json"),
    ("search_infinite_alpha", "/api/memory/search",
     b'{"query": "x", "alpha": -Infinity}', 400, "bad_json"),
    ("search_alpha_overflowing_to_infinity", "/api/memory/search",
     b'{"query": "x", "mmr_lambda": 1e999}', 422, "invalid_request"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [case[1:] for case in HTTP_CASES],
    ids=[case[0] for case in HTTP_CASES],
)
async def test_the_http_api_takes_no_vectors_and_no_nan(target, path, body, status, code):
    """Vectors are derived on each node and never accepted from outside; NaN and infinities are
    not numbers anywhere."""
    before = await server_state(target)

    answer = await asyncio.to_thread(http_call, target, path, body)

    assert (answer.status, answer.body["error"]["code"]) == (status, code), answer
    assert await server_state(target) == before


@pytest.mark.slow
def test_slow_peers_are_closed_after_the_timeout_while_everyone_else_is_served(target, slow_peers):
    """Half-open and mute links are closed after the handshake deadline, a stalled one after the
    no-progress timeout; the one that
    stopped reading holds no more than the session's window of pages, and others were served."""
    peers = slow_peers.result(timeout=2 * (NO_PROGRESS_TIMEOUT_S + SLACK_S))

    handshake_s = SyncSettings().handshake_timeout_s  # they never authenticated
    for timed in (peers.half_open, peers.mute):
        assert_outcome(timed.outcome, "timeout", 1008)
        assert handshake_s - 1 <= timed.seconds <= handshake_s + SLACK_S
    stall = peers.stall
    assert NO_PROGRESS_TIMEOUT_S - 1 <= stall.seconds <= NO_PROGRESS_TIMEOUT_S + SLACK_S, stall
    assert "read nothing" in stall.last_error, stall  # its send blocked, and was given up
    pages = [size for opcode, size in stall.drained if opcode == OP_BINARY]
    assert 0 < len(pages) <= MAX_PAGES_IN_FLIGHT and max(pages) <= MAX_FRAME_BYTES, stall
    assert stall.rss_growth < MAX_RSS_GROWTH_BYTES, stall
    # Every row the server holds was written once, so its export has a line per log entry.
    assert peers.rows_caught_up == len(target.export.splitlines()) > BULK_FACTS
    assert_still_serving(target)


def test_after_every_hostile_page_a_paired_sync_works_and_the_rows_are_unchanged(target):
    assert_synced_and_unchanged(target)
