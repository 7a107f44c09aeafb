"""A snapshot is taken only when asked for (issue 23, #2; docs/PROTOCOL.md §7 and §9).

One SnapshotPage from a paired peer, sent without being asked, used to delete every row of its
receiver and raise its vector. Now each Vector a node sends licenses one snapshot, and only
one whose vector holds something that Vector lacked; any other page is refused with
``unsolicited_snapshot`` before the node sees it.
"""

from __future__ import annotations

from feral.sync.codec import encode_message
from feral.sync.delta import Delta, Page
from feral.sync.messages import CaughtUp
from feral.sync.schema import FACTS
from feral.sync.session import PageReceived, State
from feral.sync.snapshot import SnapshotPage, SnapshotReceived, SnapshotSession
from feral.sync.types import NodeId, RowId

from .session_support import EPOCH_MS, FakeKeys, SimNode, fact_values

STAMP = EPOCH_MS << 16


def open_pair() -> tuple[SnapshotSession, SnapshotSession, NodeId]:
    """Two authenticated sessions (no Vector sent yet), and the sender's id."""
    keys = FakeKeys()
    a, b = SimNode("a", keys), SimNode("b", keys)
    a.pair(b)
    left, right = SnapshotSession(a.local_peer()), SnapshotSession(b.local_peer())
    while frames := (left.frames_to_send(), right.frames_to_send()):
        if not frames[0] and not frames[1]:
            break
        for frame in frames[0]:
            right.receive_frame(frame)
        for frame in frames[1]:
            left.receive_frame(frame)
    assert left.state is right.state is State.OPEN
    left.events_received()
    return left, right, b.node_id


def page(origin: NodeId, *, final: bool = True, after: str = "") -> bytes:
    row = Delta(FACTS.name, RowId("r1"), STAMP, origin, fact_values("r1", "x"))
    rows = (row,) if not after else ()
    through = None if final else "r1"
    snapshot = SnapshotPage({origin: STAMP}, {origin: 1}, 1 << 62, FACTS.code, after, through,
                            rows, final)  # fmt: skip
    return encode_message(snapshot)


def caught_up(origin: NodeId) -> bytes:
    return encode_message(CaughtUp({origin: STAMP}, {origin: 1}, b""))


def log_page(origin: NodeId) -> bytes:
    delta = Delta(FACTS.name, RowId("r2"), STAMP + 1, origin, fact_values("r2", "y"))
    return encode_message(Page(origin, STAMP, (delta,)))


def refusals(session: SnapshotSession) -> list[str]:
    return [e.code for e in session.events_received() if hasattr(e, "code")]


def test_a_snapshot_page_nobody_asked_for_is_refused() -> None:
    receiver, _, sender = open_pair()
    receiver.receive_frame(page(sender))
    assert refusals(receiver) == ["unsolicited_snapshot"]
    assert receiver.state is State.CLOSING


def test_a_snapshot_for_a_node_that_holds_everything_it_covers_is_refused() -> None:
    receiver, _, sender = open_pair()
    receiver.send_vector({sender: STAMP})
    receiver.receive_frame(page(sender))
    assert refusals(receiver) == ["unsolicited_snapshot"]


def test_a_vector_licenses_one_snapshot_from_its_first_page_to_its_final_one() -> None:
    receiver, _, sender = open_pair()
    receiver.send_vector({})
    receiver.receive_frame(page(sender, final=False))
    receiver.receive_frame(page(sender, final=True, after="r1"))
    events = receiver.events_received()
    assert [type(e) for e in events] == [SnapshotReceived, SnapshotReceived]
    receiver.receive_frame(caught_up(sender))  # the stream answering the Vector ended
    receiver.receive_frame(page(sender))  # a second snapshot for the same Vector
    assert refusals(receiver) == ["unsolicited_snapshot"]


def test_a_stream_may_go_on_with_a_snapshot_until_its_first_log_page_or_caught_up() -> None:
    """After its final page the sender goes on from the snapshot's vector; where its own floor
    rose meanwhile (it took a snapshot itself), that is a snapshot again, answering the same
    Vector. Once a log page came, the stream is past its snapshot part."""
    receiver, _, sender = open_pair()
    receiver.send_vector({})
    receiver.receive_frame(page(sender))
    receiver.receive_frame(page(sender))  # the stream goes on with a snapshot
    assert [type(e) for e in receiver.events_received()] == [SnapshotReceived] * 2
    receiver.receive_frame(log_page(sender))
    assert [type(e) for e in receiver.events_received()] == [PageReceived]
    receiver.receive_frame(page(sender))
    assert refusals(receiver) == ["unsolicited_snapshot"]


def test_two_vectors_sent_before_the_first_page_license_two_snapshots_and_no_third() -> None:
    """Anti-entropy may send a second Vector before the snapshot answering the first arrives;
    the peer answers that one too, with a snapshot of its own."""
    receiver, _, sender = open_pair()
    receiver.send_vector({})
    receiver.send_vector({})
    receiver.receive_frame(page(sender, final=False))
    receiver.receive_frame(page(sender, final=True, after="r1"))
    receiver.receive_frame(page(sender))  # the answer to the second Vector
    assert [type(e) for e in receiver.events_received()] == [SnapshotReceived] * 3
    receiver.receive_frame(caught_up(sender))
    receiver.receive_frame(page(sender))
    assert refusals(receiver) == ["unsolicited_snapshot"]
