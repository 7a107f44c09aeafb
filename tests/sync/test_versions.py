"""Protocol versions negotiated at the Hellos, and peers of other schema versions (PROTOCOL §10).

Sessions here speak ranges this release does not ship ([3, 4], [4, 6], [5, 6]): the range is a
parameter of the pure session, so negotiation and the refusal's words are proved on the code
the node runs.
"""

from __future__ import annotations

import msgpack
import pytest

from feral.sync.codec import PROTOCOL_VERSION, SPOKEN, decode_message, encode_message
from feral.sync.messages import ErrorMessage, Hello
from feral.sync.schema import SCHEMA_VERSION
from feral.sync.session import CLOSE_POLICY, SyncSession
from feral.sync.versions import ProtocolRange, mismatch_text

from .session_support import Link, SimNode, messages


def link_speaking(a: SimNode, b: SimNode, a_range: ProtocolRange, b_range: ProtocolRange) -> Link:
    return Link(
        a, b, a_peer=a.local_peer(protocols=a_range), b_peer=b.local_peer(protocols=b_range)
    ).run()


def test_this_release_speaks_version_3_only():
    assert PROTOCOL_VERSION == 3
    assert SPOKEN == ProtocolRange(3, 3)


def test_two_ranges_agree_on_the_highest_common_version(laptop, phone):
    laptop.store.write("f1", "laptop's fact")
    link = link_speaking(laptop, phone, ProtocolRange(3, 5), ProtocolRange(4, 6))
    assert link.quiet
    assert link.a.session.protocol_version == link.b.session.protocol_version == 5
    assert phone.store.snapshot() == laptop.store.snapshot()
    # After the Hellos every frame carries the agreed version; the Hello, the lowest spoken.
    tags = [msgpack.unpackb(frame)[0] for frame in link.a.sent]
    assert tags[0] == 3 and set(tags[1:]) == {5}


def test_ranges_that_touch_at_one_version_use_it(laptop, phone):
    link = link_speaking(laptop, phone, ProtocolRange(3, 4), ProtocolRange(4, 9))
    assert link.quiet and link.a.session.protocol_version == 4


@pytest.mark.parametrize("older_first", [True, False])
def test_no_common_version_refuses_on_both_sides_naming_who_must_upgrade(
    laptop, phone, older_first
):
    laptop.store.write("f1", "laptop's fact")
    old, new = ProtocolRange(3, 4), ProtocolRange(5, 6)
    link = link_speaking(laptop, phone, *((old, new) if older_first else (new, old)))
    older, newer = (laptop, phone) if older_first else (phone, laptop)
    for side in link.sides:
        own = [f for f in side.failures if not f.remote]
        assert [f.code for f in own] == ["protocol_mismatch"]
        assert own[0].close_code == CLOSE_POLICY
        assert own[0].message.endswith(
            f"{older.name} {older.node_id} runs an older version of feral, not compatible with "
            f"{newer.name} {newer.node_id}: upgrade feral on {older.name} {older.node_id}"
        )
    assert not link.a.authenticated and not link.b.authenticated
    assert phone.store.snapshot() == {}  # nothing moved


def test_the_mismatch_text_names_both_ranges_and_the_side_to_upgrade():
    text = mismatch_text(ProtocolRange(3, 4), ProtocolRange(5, 6), "server S", "laptop L")
    assert text == (
        "protocol version mismatch: laptop L speaks sync protocol 5 to 6, this node (server S) "
        "speaks 3 to 4; server S runs an older version of feral, not compatible with laptop L: "
        "upgrade feral on server S"
    )


def test_a_version_2_node_is_refused_with_the_upgrade_message_it_can_read(laptop, phone):
    """A version-2 node sends a seven-field Hello tagged 2 and refuses any other tag: this node
    names it in the refusal and tags its Error 2, so the old node can show why."""
    session = SyncSession(laptop.local_peer())
    session.frames_to_send()
    (hello,) = messages(SyncSession(phone.local_peer()).frames_to_send())
    assert isinstance(hello, Hello)
    old_hello = msgpack.packb([2, 2, *hello.to_fields()[:7]], use_bin_type=True)
    session.receive_frame(old_hello)
    (failure,) = session.events_received()
    assert failure.code == "protocol_mismatch"
    assert "phone" in failure.message and "speaks sync protocol 2 (a node of protocol" in (
        failure.message
    )
    assert failure.message.endswith(f"upgrade feral on phone {phone.node_id}")
    assert session.offered is not None and session.offered.node_id == phone.node_id
    (frame,) = session.frames_to_send()
    assert msgpack.unpackb(frame)[:3] == [2, 7, "protocol_mismatch"]  # what version 2 decodes


def test_a_hello_of_a_newer_version_with_appended_fields_is_read(laptop, phone):
    session = SyncSession(laptop.local_peer())
    session.frames_to_send()
    newer_phone = SyncSession(phone.local_peer(protocols=ProtocolRange(5, 6)))
    (hello,) = messages(newer_phone.frames_to_send())
    assert isinstance(hello, Hello)
    newer = msgpack.packb([5, 2, *hello.to_fields(), "a field of version 5"], use_bin_type=True)
    session.receive_frame(newer)
    (failure,) = session.events_received()
    assert failure.code == "protocol_mismatch"
    assert failure.message.endswith(f"upgrade feral on laptop {laptop.node_id}")
    (frame,) = session.frames_to_send()
    assert msgpack.unpackb(frame)[0] == 3  # our lowest: a node from version 3 on reads it


def test_an_error_of_any_version_is_read():
    for tag in (2, 3, 9):
        frame = msgpack.packb([tag, 7, "protocol_mismatch", "upgrade"])
        assert decode_message(frame) == ErrorMessage("protocol_mismatch", "upgrade")


def test_frames_after_the_handshake_must_carry_the_agreed_version(laptop, phone):
    link = link_speaking(laptop, phone, ProtocolRange(3, 4), ProtocolRange(3, 4))
    assert link.quiet
    from feral.sync.messages import Vector

    link.a.session.receive_frame(encode_message(Vector({}), 3))
    (failure,) = link.a.session.events_received()
    assert failure.code == "bad_frame" and "protocol version 3" in failure.message


def test_peers_of_different_schema_versions_sync(laptop, phone):
    """Schema changes are additive: a newer schema no longer refuses an older one."""
    laptop.store.write("f1", "laptop's fact")
    newer = phone.local_peer(schema_version=SCHEMA_VERSION + 1)
    link = Link(laptop, phone, b_peer=newer).run()
    assert link.quiet and not link.a.failures and not link.b.failures
    assert link.a.session.peer is not None
    assert link.a.session.peer.schema_version == SCHEMA_VERSION + 1
    assert phone.store.snapshot() == laptop.store.snapshot()
