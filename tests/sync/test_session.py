"""The sans-I/O ``SyncSession``: two sessions wired back to back, answered by in-memory stores.

No event loop and no socket: :class:`tests.sync.session_support.Link` shuttles the frames of one
session into the other and answers each event the way a node does.
"""

from __future__ import annotations

import itertools
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings, strategies as st

from feral.sync.codec import MAX_FRAME_BYTES, PROTOCOL_VERSION, decode_message, encode_message
from feral.sync.delta import Delta, Page
from feral.sync.errors import FeralError
from feral.sync.messages import Ack, Auth, CaughtUp, ErrorMessage, Hello, Vector
from feral.sync.schema import SCHEMA_VERSION
from feral.sync.session import (
    CLOSE_BAD_DATA,
    CLOSE_POLICY,
    CLOSE_PROTOCOL,
    MAX_PAGES_IN_FLIGHT,
    Authenticated,
    DeltasRequested,
    Failed,
    PageAcked,
    PageReceived,
    PeerCaughtUp,
    State,
    SyncSession,
    transcript,
)
from feral.sync.types import RowId

from .session_support import (
    SKEW_MS,
    FakeKeys,
    Link,
    SimNode,
    fact_values,
    fingerprint,
    messages,
)


def open_link(a: SimNode, b: SimNode, **options: Any) -> Link:
    """A link that has finished its handshake and first round (both sides quiet)."""
    link = Link(a, b, **options).run()
    assert link.quiet
    return link


def assert_failed_locally(session: SyncSession, code: str, close_code: int) -> Failed:
    """The session refused: one local Failed event and an ErrorMessage as its last frame."""
    events = session.events_received()
    assert [type(e) for e in events] == [Failed], events
    failure = events[0]
    assert isinstance(failure, Failed)
    assert (failure.code, failure.remote, failure.close_code) == (code, False, close_code)
    frames = session.frames_to_send()
    assert frames, "no error frame was queued"
    error = decode_message(frames[-1])
    assert isinstance(error, ErrorMessage)
    assert error.code == code
    assert session.state is State.CLOSING
    assert session.close_code == close_code
    return failure


def failures(session: SyncSession) -> list[Failed]:
    """The session's pending events, which must all be failures."""
    events = session.events_received()
    assert all(isinstance(e, Failed) for e in events), events
    return [e for e in events if isinstance(e, Failed)]


def assert_converged(*nodes: SimNode) -> None:
    first = nodes[0].store
    for node in nodes[1:]:
        assert node.store.snapshot() == first.snapshot()
        assert node.store.vector() == first.vector()


def assert_quiet_means_nothing_in_flight(link: Link) -> None:
    """A quiet side has applied every page it received, and had every page it sent acked."""
    for side in link.sides:
        if side.session.quiet:
            assert side.pages_received == side.acks_made, side.node.name
            assert side.pages_sent == side.acks_received, side.node.name


def assert_quiet_means_in_sync(link: Link) -> None:
    """With no writes during the link, a quiet side holds what its peer holds, and vice versa."""
    assert_quiet_means_nothing_in_flight(link)
    for side in link.sides:
        if side.session.quiet:
            assert link.a.node.store.vector() == link.b.node.store.vector(), side.node.name


def write_rows(node: SimNode, count: int, prefix: str = "r") -> None:
    for i in range(count):
        node.wall.advance(1)
        node.store.write(f"{prefix}{i}", f"{node.name} {i}")


# -- handshake ---------------------------------------------------------------------------------


def test_each_session_opens_with_a_hello_that_describes_its_node(laptop):
    session = SyncSession(laptop.local_peer())
    (hello,) = messages(session.frames_to_send())
    assert isinstance(hello, Hello)
    assert hello.node_id == laptop.node_id == fingerprint(hello.public_key)
    assert hello.public_key == laptop.public_key
    assert (hello.schema_version, hello.epoch, hello.name) == (
        SCHEMA_VERSION,
        "epoch-laptop",
        "laptop",
    )
    assert hello.wall_ms == laptop.wall.now
    assert len(hello.nonce) == 32
    assert session.state is State.HANDSHAKE
    assert not session.quiet


def test_a_handshake_between_paired_nodes_authenticates_both_sides(laptop, phone):
    phone.wall.advance(1234)
    link = Link(laptop, phone).run()
    assert link.a.authenticated == [Authenticated(phone.node_id, "phone", "epoch-phone", 1234)]
    assert link.b.authenticated == [Authenticated(laptop.node_id, "laptop", "epoch-laptop", -1234)]
    assert link.a.failures == link.b.failures == []
    assert link.a.session.state is link.b.session.state is State.OPEN
    assert link.a.session.peer is not None and link.a.session.peer.node_id == phone.node_id


def test_the_auth_signature_covers_both_ids_and_both_nonces(laptop, phone):
    a = SyncSession(laptop.local_peer())
    b = SyncSession(phone.local_peer())
    (hello_a,) = messages(a.frames_to_send())
    (frame_b,) = b.frames_to_send()
    hello_b = decode_message(frame_b)
    a.receive_frame(frame_b)
    (auth,) = messages(a.frames_to_send())
    assert isinstance(auth, Auth) and isinstance(hello_a, Hello) and isinstance(hello_b, Hello)
    signed = transcript(laptop.node_id, phone.node_id, hello_b.nonce, hello_a.nonce)
    assert auth.signature == FakeKeys.signer(laptop.secret)(signed)
    assert laptop.node_id.encode() in signed and phone.node_id.encode() in signed


def test_nothing_but_a_hello_opens_a_handshake(laptop, phone):
    session = SyncSession(laptop.local_peer())
    session.frames_to_send()
    session.receive_frame(encode_message(Vector({})))
    failure = assert_failed_locally(session, "protocol_error", CLOSE_PROTOCOL)
    assert "Vector" in failure.message


def test_an_auth_before_the_hello_is_a_protocol_error(laptop):
    session = SyncSession(laptop.local_peer())
    session.frames_to_send()
    session.receive_frame(encode_message(Auth(b"\x00" * 64)))
    assert_failed_locally(session, "protocol_error", CLOSE_PROTOCOL)


def test_a_second_hello_during_the_handshake_is_a_protocol_error(laptop, phone):
    session = SyncSession(laptop.local_peer())
    hello = SyncSession(phone.local_peer()).frames_to_send()[0]
    session.receive_frame(hello)
    session.frames_to_send()
    session.receive_frame(hello)
    assert_failed_locally(session, "protocol_error", CLOSE_PROTOCOL)


def test_an_unpaired_peer_is_refused_on_both_sides_and_nobody_authenticates(laptop, keys):
    stranger = SimNode("stranger", keys)
    stranger.paired.add(laptop.node_id)  # the stranger trusts the laptop; not the other way
    link = Link(laptop, stranger).run()
    (local,) = link.a.failures
    assert (local.code, local.remote, local.close_code) == ("not_paired", False, CLOSE_POLICY)
    assert stranger.node_id in local.message and "feral sync peers add" in local.message
    (remote,) = link.b.failures
    assert (remote.code, remote.remote) == ("not_paired", True)
    assert link.a.authenticated == link.b.authenticated == []
    assert link.a.session.close_code == CLOSE_POLICY


def test_a_node_id_that_is_not_the_keys_fingerprint_is_refused(laptop, phone, keys):
    mallory = SimNode("mallory", keys)
    mallory.pair(laptop)
    impostor = mallory.local_peer(node_id=phone.node_id)  # phone's id, mallory's key
    link = Link(laptop, mallory, b_peer=impostor).run()
    (failure,) = link.a.failures
    assert (failure.code, failure.remote, failure.close_code) == ("auth_failed", False, 1008)
    assert "fingerprint" in failure.message
    assert link.a.authenticated == []
    assert [f.remote for f in link.b.failures] == [True]


def test_a_signature_by_the_wrong_key_is_refused(laptop, phone, keys):
    mallory = SimNode("mallory", keys)
    forged = phone.local_peer(sign=FakeKeys.signer(mallory.secret))  # phone's id and key
    link = Link(laptop, phone, b_peer=forged).run()
    (failure,) = link.a.failures
    assert (failure.code, failure.remote, failure.close_code) == ("auth_failed", False, 1008)
    assert link.a.authenticated == []
    assert [(f.code, f.remote) for f in link.b.failures] == [("auth_failed", True)]


def test_a_recorded_handshake_replayed_into_a_new_session_is_refused(laptop, phone):
    first = open_link(laptop, phone)
    recorded = first.b.sent  # everything the genuine phone said, Hello and Auth first
    assert [type(m) for m in messages(recorded[:2])] == [Hello, Auth]
    session = SyncSession(laptop.local_peer())  # a new session has a new nonce
    assert session.local.nonce != first.a.session.local.nonce
    session.frames_to_send()
    for frame in recorded:
        session.receive_frame(frame)
    failure = assert_failed_locally(session, "auth_failed", CLOSE_POLICY)
    assert "signature" in failure.message
    assert session.events_received() == []


@pytest.mark.parametrize("kind", [Hello, Auth])
def test_a_handshake_message_after_the_handshake_is_a_protocol_error(laptop, phone, kind):
    link = open_link(laptop, phone)
    replay = next(f for f in link.b.sent if isinstance(decode_message(f), kind))
    link.a.session.receive_frame(replay)
    failure = assert_failed_locally(link.a.session, "protocol_error", CLOSE_PROTOCOL)
    assert "after the handshake" in failure.message


@pytest.mark.parametrize("sign", [1, -1])
def test_wall_clocks_further_apart_than_the_window_are_refused_at_the_handshake(
    laptop, phone, sign
):
    phone.wall.advance(sign * (SKEW_MS + 1))
    link = Link(laptop, phone).run()
    (failure,) = link.a.failures
    assert (failure.code, failure.remote, failure.close_code) == ("clock_skew", False, 1008)
    assert f"{SKEW_MS + 1} ms {'ahead of' if sign > 0 else 'behind'}" in failure.message
    assert str(SKEW_MS) in failure.message
    (other,) = link.b.failures
    assert (other.code, other.remote) == ("clock_skew", False)
    assert f"{SKEW_MS + 1} ms {'behind' if sign > 0 else 'ahead of'}" in other.message
    assert link.a.authenticated == link.b.authenticated == []


@pytest.mark.parametrize("offset", [SKEW_MS, -SKEW_MS, 0])
def test_wall_clocks_within_the_window_are_accepted(laptop, phone, offset):
    phone.wall.advance(offset)
    link = Link(laptop, phone).run()
    assert [e.clock_offset_ms for e in link.a.authenticated] == [offset]
    assert [e.clock_offset_ms for e in link.b.authenticated] == [-offset]
    assert link.quiet


def test_a_node_cannot_sync_with_itself(laptop):
    laptop.paired.add(laptop.node_id)
    session = SyncSession(laptop.local_peer())
    own = session.frames_to_send()[0]
    session.receive_frame(own)
    assert_failed_locally(session, "same_node", CLOSE_POLICY)


# -- syncing -----------------------------------------------------------------------------------


def test_both_directions_converge_in_one_session_over_many_small_pages(laptop, phone):
    write_rows(laptop, 25)
    phone.wall.advance(100)
    write_rows(phone, 17)  # r0..r16 collide with the laptop's rows, and are newer
    link = Link(laptop, phone, page_limit=3).run()
    assert_converged(laptop, phone)
    assert link.quiet
    assert link.a.pages_sent == 9 and link.b.pages_sent == 6
    assert link.a.max_unacked == link.b.max_unacked == MAX_PAGES_IN_FLIGHT
    winners = {row_id: row.origin for (_, row_id), row in laptop.store.rows.items()}
    assert winners == {f"r{i}": phone.node_id if i < 17 else laptop.node_id for i in range(25)}


def test_pages_in_flight_never_exceed_the_cap_even_when_one_answer_spans_many_origins(
    laptop, phone, keys
):
    for i in range(MAX_PAGES_IN_FLIGHT + 3):
        origin = SimNode(f"origin{i}", keys)
        delta = origin.store.write(f"x{i}", "relayed")
        laptop.store.apply(Page(origin.node_id, 0, (delta,)))
    link = Link(laptop, phone).run()  # one request may answer with a page per origin
    assert link.a.max_unacked <= MAX_PAGES_IN_FLIGHT
    assert_converged(laptop, phone)
    assert link.quiet


def test_a_page_too_large_for_one_frame_is_sent_as_several_that_fit(laptop, phone):
    big = "x" * 65_536  # the largest text a fact's object may hold
    rows = MAX_FRAME_BYTES // len(big) + 6  # one page of these is more than a frame may carry
    for i in range(rows):
        laptop.store.write(f"big{i}", big)
    link = Link(laptop, phone).run()
    assert link.a.failures == link.b.failures == []
    assert max(len(frame) for frame in link.a.sent) <= MAX_FRAME_BYTES
    assert link.a.pages_sent >= 2
    assert_converged(laptop, phone)
    assert link.quiet


def test_a_single_delta_too_large_for_a_frame_is_sent_whole_and_refused_by_the_peer(laptop, phone):
    link = open_link(laptop, phone)
    huge = Delta("facts", RowId("huge"), 1, laptop.node_id, fact_values("huge", "x" * (5 << 20)))
    link.a.session.local_changed()
    link.a.session.events_received()
    link.a.session.send_pages([Page(laptop.node_id, 0, (huge,))])  # no schema check on this side
    link.run()
    assert [(f.code, f.remote) for f in link.b.failures] == [("bad_frame", False)]


def test_quiet_holds_only_once_both_sides_hold_the_same_log(laptop, phone):
    write_rows(laptop, 10)
    write_rows(phone, 7, prefix="p")
    seen_quiet = []

    def check(link: Link) -> None:
        assert_quiet_means_in_sync(link)
        seen_quiet.append((link.a.session.quiet, link.b.session.quiet))

    link = Link(laptop, phone, page_limit=2, check=check).run()
    assert seen_quiet[0] == (False, False)
    assert seen_quiet[-1] == (True, True)
    assert any(isinstance(e, PeerCaughtUp) for e in link.a.events)
    assert any(isinstance(e, PeerCaughtUp) for e in link.b.events)
    caught_up = [m for m in messages(link.a.sent) if isinstance(m, CaughtUp)]
    assert caught_up and caught_up[-1].vector == laptop.store.vector()


def test_live_sync_carries_a_write_made_after_quiet_and_settles_again(laptop, phone):
    link = open_link(laptop, phone, check=assert_quiet_means_in_sync)
    link.check = assert_quiet_means_nothing_in_flight  # the phone cannot know of the new write
    laptop.wall.advance(5)
    laptop.store.write("late", "written while connected")
    link.a.session.local_changed()
    assert not link.a.session.quiet
    link.run()
    assert_converged(laptop, phone)
    assert link.quiet
    phone.store.write("later", "and back")
    link.b.session.local_changed()
    link.run()
    assert_converged(laptop, phone)
    assert link.quiet


def test_a_side_holding_a_received_page_it_has_not_applied_is_not_quiet(laptop, phone):
    link = open_link(laptop, phone)
    laptop.store.write("late", "x")
    link.a.session.local_changed()
    link.a.answer()
    page = [f for f in link.a.drain() if isinstance(decode_message(f), Page)]
    assert len(page) == 1
    link.b.deliver(page)
    assert not link.b.session.quiet
    link.run()
    assert link.quiet


def test_a_write_committed_while_a_request_is_answered_with_nothing_still_streams(laptop, phone):
    link = open_link(laptop, phone)
    store, session = laptop.store, link.a.session
    session.local_changed()  # a wake-up with nothing new yet
    (request,) = session.events_received()
    assert isinstance(request, DeltasRequested)
    stale_vector = store.vector()
    assert store.changes_since(request.since, request.limit) == []  # the node read: nothing
    store.write("raced", "committed before the answer went out")
    session.local_changed()  # the commit's wake-up, while the request is still open
    session.send_caught_up(stale_vector)  # the node answers from its earlier read
    link.run()
    assert_converged(laptop, phone)
    assert link.quiet


def test_a_relay_carries_writes_between_nodes_that_never_meet(laptop, phone, keys):
    server = SimNode("server", keys)
    server.pair(laptop, phone)  # laptop and phone are paired with each other too, but never meet
    write_rows(laptop, 5, prefix="l")
    phone.wall.advance(60_000)  # the phone writes later: its stamps are newer than the laptop's
    write_rows(phone, 5, prefix="p")
    open_link(phone, server)
    open_link(laptop, server)  # the laptop's older stamps reach the server after the phone's
    open_link(server, phone)  # a cursor on the clock would skip them; a vector per origin does not
    assert_converged(laptop, server, phone)
    assert set(phone.store.vector()) == {laptop.node_id, phone.node_id}


def test_acks_and_catch_ups_are_reported_to_the_node(laptop, phone):
    write_rows(laptop, 3)
    link = Link(laptop, phone, page_limit=2).run()
    acked = [e for e in link.a.events if isinstance(e, PageAcked)]
    assert [(e.origin, e.hlc) for e in acked] == [
        (laptop.node_id, laptop.store.log[laptop.node_id][1].hlc),
        (laptop.node_id, laptop.store.log[laptop.node_id][2].hlc),
    ]
    assert link.a.session.peer_vector == laptop.store.vector()
    received = [e for e in link.b.events if isinstance(e, PageReceived)]
    assert [len(e.page.deltas) for e in received] == [2, 1]
    assert [e.vector for e in link.b.events if isinstance(e, PeerCaughtUp)] == [
        laptop.store.vector()
    ]


def test_empty_pages_are_not_sent(laptop, phone):
    link = open_link(laptop, phone)
    link.a.session.local_changed()
    link.a.session.events_received()
    link.a.session.send_pages([Page(laptop.node_id, 0, ())])
    assert link.a.session.frames_to_send() == []


# -- acks --------------------------------------------------------------------------------------


def test_an_ack_when_no_page_is_in_flight_is_a_protocol_error(laptop, phone):
    link = open_link(laptop, phone)
    link.a.session.receive_frame(encode_message(Ack(phone.node_id, 1)))
    failure = assert_failed_locally(link.a.session, "protocol_error", CLOSE_PROTOCOL)
    assert "ack" in failure.message


def test_an_ack_for_a_page_that_was_not_sent_is_a_protocol_error_even_with_pages_in_flight(
    laptop, phone
):
    link = open_link(laptop, phone)
    delta = laptop.store.write("late", "x")
    link.a.session.local_changed()
    link.a.answer()
    assert any(isinstance(m, Page) for m in messages(link.a.drain()))
    link.a.session.receive_frame(encode_message(Ack(phone.node_id, delta.hlc + 99)))
    assert_failed_locally(link.a.session, "protocol_error", CLOSE_PROTOCOL)
    assert link.a.session.peer_vector is not None
    assert phone.node_id not in link.a.session.peer_vector or (
        link.a.session.peer_vector[phone.node_id] < delta.hlc + 99
    )


def test_an_ack_for_the_page_in_flight_is_accepted(laptop, phone):
    link = open_link(laptop, phone)
    delta = laptop.store.write("late", "x")
    link.a.session.local_changed()
    link.a.answer()
    link.a.drain()
    link.a.session.receive_frame(encode_message(Ack(laptop.node_id, delta.hlc)))
    assert PageAcked(laptop.node_id, delta.hlc, 1) in link.a.session.events_received()


# -- refusals and bad input --------------------------------------------------------------------


def valid_frames(laptop: SimNode, phone: SimNode) -> list[bytes]:
    """One frame of every message kind, as a real link produced them."""
    write_rows(laptop, 2)
    link = open_link(laptop, phone)
    error = encode_message(ErrorMessage("x", "y"))
    return [*link.a.sent, *link.b.sent, error]


@pytest.mark.parametrize(
    ("data", "code", "close_code"),
    [
        (b"", "bad_frame", CLOSE_BAD_DATA),
        (b"\xc1", "bad_frame", CLOSE_BAD_DATA),
        (b"\xff\xfe\xfd", "bad_frame", CLOSE_BAD_DATA),
        (msgpack.packb({"kind": "hello"}), "bad_frame", CLOSE_BAD_DATA),
        (msgpack.packb([PROTOCOL_VERSION]), "bad_frame", CLOSE_BAD_DATA),
        (msgpack.packb([PROTOCOL_VERSION + 1, 2]), "bad_frame", CLOSE_BAD_DATA),
        (msgpack.packb([PROTOCOL_VERSION, 99]), "bad_frame", CLOSE_BAD_DATA),
        (msgpack.packb([PROTOCOL_VERSION, 5, "not-a-node-id", 1]), "protocol_error", 1002),
        (msgpack.packb([PROTOCOL_VERSION, 1, "a" * 32, 0, [[9, 1, "r", None]]]), "bad_frame",
         CLOSE_BAD_DATA),
        (msgpack.packb([PROTOCOL_VERSION, 1, "a" * 32, 5, [[2, 1, "r", None, None]]]),
             "protocol_error",
         1002),
    ],
)  # fmt: skip
def test_a_malformed_frame_fails_the_session_with_a_typed_error(laptop, data, code, close_code):
    session = SyncSession(laptop.local_peer())
    session.frames_to_send()
    session.receive_frame(data)
    assert_failed_locally(session, code, close_code)


def test_every_truncation_of_every_valid_frame_is_refused_without_raising(laptop, phone):
    for frame in valid_frames(laptop, phone):
        for cut in range(len(frame)):
            session = SyncSession(laptop.local_peer())
            session.frames_to_send()
            session.receive_frame(frame[:cut])
            assert_failed_locally(session, "bad_frame", CLOSE_BAD_DATA)


def assert_refused_or_handled(session: SyncSession, data: bytes) -> None:
    """Feeding ``data`` never raises; input that does not decode fails with a typed error."""
    session.receive_frame(data)
    try:
        decode_message(data)
    except FeralError:
        pass
    else:
        return  # a valid message: the session acted on it (or refused it as out of place)
    events = failures(session)
    assert len(events) == 1
    assert (events[0].code, events[0].close_code) in {
        ("bad_frame", CLOSE_BAD_DATA),
        ("protocol_error", CLOSE_PROTOCOL),
    }
    assert isinstance(decode_message(session.frames_to_send()[-1]), ErrorMessage)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=80))
def test_random_bytes_in_the_handshake_never_raise(data):
    keys = FakeKeys()
    session = SyncSession(SimNode("laptop", keys).local_peer())
    session.frames_to_send()
    assert_refused_or_handled(session, data)


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=80) | st.binary(max_size=80).map(lambda b: b"\x95\x01\x01" + b))
def test_random_bytes_on_an_open_link_never_raise(data):
    keys = FakeKeys()
    laptop, phone = SimNode("laptop", keys), SimNode("phone", keys)
    laptop.pair(phone)
    link = open_link(laptop, phone)
    assert_refused_or_handled(link.a.session, data)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_valid_frames_with_a_flipped_byte_never_raise(data):
    keys = FakeKeys()
    laptop, phone = SimNode("laptop", keys), SimNode("phone", keys)
    laptop.pair(phone)
    frames = valid_frames(laptop, phone)
    frame = bytearray(data.draw(st.sampled_from(frames)))
    index = data.draw(st.integers(0, len(frame) - 1))
    frame[index] ^= data.draw(st.integers(1, 255))
    session = SyncSession(laptop.local_peer())
    session.frames_to_send()
    assert_refused_or_handled(session, bytes(frame))


def test_a_page_before_the_handshake_is_a_protocol_error(laptop, phone):
    write_rows(laptop, 1)
    page = next(f for f in valid_frames(laptop, phone) if isinstance(decode_message(f), Page))
    session = SyncSession(laptop.local_peer())
    session.frames_to_send()
    session.receive_frame(page)
    assert_failed_locally(session, "protocol_error", CLOSE_PROTOCOL)


def test_an_error_message_from_the_peer_fails_the_session_as_remote(laptop, phone):
    link = open_link(laptop, phone)
    link.a.session.receive_frame(encode_message(ErrorMessage("storage_error", "disk full")))
    assert link.a.session.events_received() == [
        Failed("storage_error", "disk full", True, CLOSE_POLICY)
    ]
    assert link.a.session.state is State.CLOSING
    assert link.a.session.frames_to_send() == []  # no error is sent back for an error


def test_an_error_message_during_the_handshake_fails_the_session_as_remote(laptop):
    session = SyncSession(laptop.local_peer())
    session.frames_to_send()
    session.receive_frame(encode_message(ErrorMessage("not_paired", "who are you")))
    assert [(e.code, e.remote) for e in failures(session)] == [("not_paired", True)]


def test_frames_after_the_session_fails_are_ignored(laptop, phone):
    frames = valid_frames(laptop, phone)
    session = SyncSession(laptop.local_peer())
    session.fail("internal", "stopping", 1011)
    assert [e.code for e in failures(session)] == ["internal"]
    session.frames_to_send()
    for frame in [*frames, b"\xc1", encode_message(ErrorMessage("x", "y"))]:
        session.receive_frame(frame)
    assert session.events_received() == []
    assert session.frames_to_send() == []
    assert session.state is State.CLOSING


def test_a_session_fails_only_once(laptop):
    session = SyncSession(laptop.local_peer())
    session.frames_to_send()
    session.fail("storage_error", "first", 1011)
    session.fail("internal", "second", 1011)
    assert [e.code for e in failures(session)] == ["storage_error"]
    assert [m.code for m in messages(session.frames_to_send()) if isinstance(m, ErrorMessage)] == [
        "storage_error"
    ]


def test_a_failed_link_sends_nothing_more_whatever_the_node_asks(laptop, phone):
    write_rows(laptop, 3)
    link = open_link(laptop, phone)
    session = link.a.session
    session.fail("storage_error", "disk full", 1011)
    session.frames_to_send()
    page = laptop.store.changes_since({}, 10)
    session.send_vector(laptop.store.vector())
    session.send_pages(page)
    session.send_caught_up(laptop.store.vector())
    session.ack(page[0])
    session.local_changed()
    assert session.frames_to_send() == []
    assert session.events_received() == [Failed("storage_error", "disk full", False, 1011)]
    assert not session.quiet


def test_end_of_stream_closes_the_session_and_later_frames_are_ignored(laptop, phone):
    link = open_link(laptop, phone)
    link.a.session.receive_eof()
    assert link.a.session.state is State.CLOSED
    link.a.session.receive_frame(b"\xc1")
    assert link.a.session.events_received() == []
    assert link.a.session.frames_to_send() == []
    assert not link.a.session.quiet


def test_the_error_text_on_the_wire_is_bounded(laptop):
    session = SyncSession(laptop.local_peer())
    session.frames_to_send()
    session.fail("internal", "x" * 5000, 1011)
    (error,) = messages(session.frames_to_send())
    assert isinstance(error, ErrorMessage) and len(error.message) == 1000
    assert len(failures(session)[0].message) == 5000


# -- convergence property ----------------------------------------------------------------------

operations = st.lists(
    st.one_of(
        st.tuples(
            st.just("write"), st.integers(0, 2), st.integers(0, 5), st.text("xyz", max_size=3)
        ),
        st.tuples(st.just("tick"), st.integers(0, 2), st.integers(0, 3), st.integers(0, 2000)),
        st.tuples(st.just("sync"), st.integers(0, 2), st.integers(0, 2), st.integers(1, 4)),
        st.tuples(st.just("live"), st.integers(0, 2), st.integers(0, 2), st.integers(0, 5)),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(
    count=st.integers(2, 3),
    offsets=st.lists(st.integers(-60_000, 60_000), min_size=3, max_size=3),
    ops=operations,
)
@pytest.mark.slow
def test_random_writes_and_pair_sessions_converge_to_the_last_writer(count, offsets, ops):
    keys = FakeKeys()
    nodes = [SimNode(f"node{i}", keys) for i in range(count)]
    for a, b in itertools.combinations(nodes, 2):
        a.pair(b)
    for node, offset in zip(nodes, offsets, strict=False):
        node.wall.advance(offset)

    def sync(a: SimNode, b: SimNode, page_limit: int) -> Link:
        link = Link(a, b, page_limit=page_limit, check=assert_quiet_means_in_sync).run()
        assert link.a.failures == link.b.failures == []
        assert link.quiet
        assert max(link.a.max_unacked, link.b.max_unacked) <= MAX_PAGES_IN_FLIGHT
        return link

    for op, i, j, n in ops:
        if op == "write":
            nodes[i % count].store.write(f"k{j}", f"v{n}")
        elif op == "tick":
            for node in nodes:
                node.wall.advance(n)
        elif i % count != j % count:
            link = sync(nodes[i % count], nodes[j % count], max(n, 1))
            if op == "live":  # a write while the link is open, pushed by local_changed
                link.check = assert_quiet_means_nothing_in_flight
                link.a.node.store.write(f"k{n}", "live")
                link.a.session.local_changed()
                link.run()
                assert link.quiet

    for a, b in itertools.combinations(nodes, 2):
        sync(a, b, 3)

    assert_converged(*nodes)
    written = [d for node in nodes for d in node.store.written]
    expected: dict[tuple[str, str], Delta] = {}
    for delta in written:
        key = (delta.table, delta.row_id)
        if key not in expected or delta.version > expected[key].version:
            expected[key] = delta
    assert nodes[0].store.rows == expected
    for node in nodes:  # every accepted write reached every log, in its origin's order
        assert nodes[0].store.log.get(node.node_id, []) == node.store.written
