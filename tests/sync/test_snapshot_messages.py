"""The snapshot's messages on the wire (sync/snapshot_messages.py, PROTOCOL.md §3)."""

from __future__ import annotations

import msgpack
import pytest

from feral.sync.codec import PROTOCOL_VERSION, decode_message, encode_message
from feral.sync.delta import Delta
from feral.sync.errors import DecodeError, ProtocolError, SchemaError
from feral.sync.snapshot_messages import SnapshotAck, SnapshotPage
from feral.sync.types import NodeId, RowId

NODE = NodeId("a" * 32)


def fact(row_id: str, hlc: int = 5) -> Delta:
    values = (row_id, "alice", "likes", "tea", 1.0, None, 1, False)
    return Delta("facts", RowId(row_id), hlc, NODE, values)


def page(*rows: Delta, after: str = "", through: str | None = None) -> SnapshotPage:
    return SnapshotPage({NODE: 9}, {NODE: 3}, 4, 2, after, through, rows, through is None)


def test_a_snapshot_page_with_a_tombstone_round_trips() -> None:
    tomb = Delta("facts", RowId("r2"), 7, NODE, None)
    sent = page(fact("r1"), tomb)
    assert decode_message(encode_message(sent)) == sent
    assert msgpack.unpackb(encode_message(sent))[:2] == [PROTOCOL_VERSION, SnapshotPage.KIND]


def test_a_snapshot_ack_round_trips() -> None:
    assert decode_message(encode_message(SnapshotAck(4))) == SnapshotAck(4)


@pytest.mark.parametrize(
    ("sent", "error"),
    [
        (page(fact("r2"), fact("r1")), ProtocolError),  # ids out of order
        (page(fact("r1"), after="r1"), ProtocolError),  # not above its 'after'
        (page(fact("r9"), through="r5"), ProtocolError),  # beyond its 'through'
    ],
)
def test_a_malformed_snapshot_page_is_refused(sent: SnapshotPage, error: type[Exception]) -> None:
    with pytest.raises(error):
        decode_message(encode_message(sent))


def test_a_snapshot_row_of_the_wrong_shape_is_refused() -> None:
    frame = msgpack.packb([PROTOCOL_VERSION, 10, {}, {}, 0, 2, "", None,
                           [["r1", 5, NODE, [1]]], True])  # fmt: skip
    with pytest.raises(SchemaError):
        decode_message(frame)
    with pytest.raises(DecodeError):
        decode_message(msgpack.packb([PROTOCOL_VERSION, 11, 0]))


@pytest.mark.parametrize("mark", [-1, 1 << 63, 1.5, True, None, "4"])
def test_a_snapshot_page_whose_collected_mark_is_not_a_stamp_is_refused(mark: object) -> None:
    frame = msgpack.packb([PROTOCOL_VERSION, 10, {}, {}, mark, 2, "", None, [], True])
    with pytest.raises(DecodeError):
        decode_message(frame)


def test_a_snapshot_page_of_the_old_seven_fields_is_refused() -> None:
    frame = msgpack.packb([PROTOCOL_VERSION, 10, {}, {}, 2, "", None, [], True])
    with pytest.raises(DecodeError):
        decode_message(frame)
