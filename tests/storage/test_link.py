"""storage/link/handler.py: one link's events answered against real database files.

Two replicas on SQLite files in tmp_path, each with a real :class:`SyncSession` and a
:class:`LinkHandler`, exchange frames by hand, as node/links/peer.py and simulations/simnode.py pump
them. Events that :func:`writes` says only read are answered with the connection set
``query_only``, so a write sneaking into one fails the test.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import sqlean

from feral.storage.db.errors import StorageError
from feral.storage.link.handler import FailureLog, Handled, LinkHandler, writes
from feral.storage.link.peers import peer_statuses
from feral.storage.memory.stats import log_epoch
from feral.storage.store import open_sync, run_write
from feral.sync.codec import decode_message
from feral.sync.messages import ErrorMessage
from feral.sync.session import (
    CLOSE_INTERNAL,
    CLOSE_POLICY,
    Event,
    Failed,
    LocalPeer,
    PageReceived,
    State,
    SyncSession,
)
from feral.sync.types import NodeId
from tests.sync.session_support import FakeKeys, fingerprint

from .support import WINDOW_MS, Replica, assert_converged, assert_unchanged, snapshot

MINUTE = 60_000
MAX_ROUNDS = 100


@dataclass
class End:
    """One side of a link: a replica, its session and the handler answering it."""

    replica: Replica
    handler: LinkHandler
    handled: list[tuple[Event, Handled]] = field(default_factory=list)

    @property
    def session(self) -> SyncSession:
        return self.handler.session

    @property
    def node_id(self) -> NodeId:
        return self.replica.node_id

    def status(self, peer: NodeId) -> dict[str, Any]:
        statuses: dict[NodeId, dict[str, Any]] = peer_statuses(self.replica.conn)
        return statuses.get(peer, {})

    def failures(self) -> list[Failed]:
        return [event for event, _ in self.handled if isinstance(event, Failed)]


@dataclass
class Devices:
    """Makes replicas whose ids are their keys' fingerprints, and link ends for them."""

    directory: Path
    keys: FakeKeys = field(default_factory=FakeKeys)
    secrets: dict[NodeId, bytes] = field(default_factory=dict)
    paired: set[NodeId] = field(default_factory=set)
    opened: list[Replica] = field(default_factory=list)

    def replica(self, name: str) -> Replica:
        public, secret = self.keys.new_key(name)
        node_id = fingerprint(public)
        self.secrets[node_id] = secret
        self.paired.add(node_id)
        replica = Replica.open(self.directory, name, node_id, synchronous="NORMAL")
        self.opened.append(replica)
        return replica

    def end(self, replica: Replica, **options: Any) -> End:
        secret = self.secrets[replica.node_id]
        local = LocalPeer(
            node_id=replica.node_id,
            public_key=self.keys.new_key(replica.name)[0],
            name=replica.name,
            epoch=log_epoch(replica.conn),
            sign=FakeKeys.signer(secret),
            verify=self.keys.verify,
            fingerprint=fingerprint,
            is_paired=self.paired.__contains__,
            now_ms=replica.time,
            max_skew_ms=WINDOW_MS,
            nonce=hashlib.sha256(f"{replica.name}:{len(self.opened)}".encode()).digest(),
        )
        return End(replica, LinkHandler(SyncSession(local, page_limit=2), **options))


@pytest.fixture
def devices(tmp_path: Path) -> Iterator[Devices]:
    made = Devices(tmp_path)
    yield made
    for replica in made.opened:
        replica.close()


def pump(end: End) -> list[bytes]:
    """Answer every event as the node does, then take the frames the session produced."""
    conn = end.replica.conn
    while events := end.session.events_received():
        for event in events:
            if writes(event):
                handled = run_write(conn, end.handler.handle, event)
            else:
                conn.execute("PRAGMA query_only = ON")
                try:
                    handled = end.handler.handle(conn, event)
                finally:
                    conn.execute("PRAGMA query_only = OFF")
            end.handled.append((event, handled))
    return end.session.frames_to_send()


def exchange(a: End, b: End) -> None:
    """Carry frames both ways until neither side has anything to send (or the link ended)."""
    out = {id(a): pump(a), id(b): pump(b)}
    for _ in range(MAX_ROUNDS):
        if not out[id(a)] and not out[id(b)]:
            return
        for sender, receiver in ((a, b), (b, a)):
            for frame in out[id(sender)]:
                receiver.session.receive_frame(frame)
        out = {id(a): pump(a), id(b): pump(b)}
    raise AssertionError(f"the link still carried frames after {MAX_ROUNDS} rounds")


def test_a_round_converges_both_replicas_and_records_rows_each_way(devices: Devices) -> None:
    laptop, phone = devices.replica("laptop"), devices.replica("phone")
    for n in range(3):
        laptop.remember("laptop", "wrote", str(n))
    phone.remember("phone", "wrote", "one")
    phone.episode("an episode")
    dialer = devices.end(laptop, expected=phone.node_id, url="ws://phone", encrypted=True)
    server = devices.end(phone)

    exchange(dialer, server)

    assert dialer.session.quiet and server.session.quiet
    assert_converged(laptop, phone)
    assert (dialer.handler.result.received, dialer.handler.result.sent) == (2, 3)
    assert (server.handler.result.received, server.handler.result.sent) == (3, 2)
    at_laptop, at_phone = dialer.status(phone.node_id), server.status(laptop.node_id)
    assert (at_laptop["rows_received"], at_laptop["rows_sent"]) == (2, 3)
    assert (at_phone["rows_received"], at_phone["rows_sent"]) == (3, 2)
    assert at_laptop["encrypted"] and not at_phone["encrypted"]
    assert at_laptop["reachable"] and at_phone["name"] == "laptop"
    assert at_laptop["last_sync_at"] == laptop.time() and at_laptop["errors"] == 0
    authenticated = [h for _, h in dialer.handled if h.authenticated]
    assert len(authenticated) == 1


def test_a_dialled_url_answered_by_another_node_is_refused_as_the_wrong_peer(
    devices: Devices,
) -> None:
    laptop, phone, impostor = (devices.replica(n) for n in ("laptop", "phone", "tablet"))
    impostor.remember("tablet", "wrote", "something")
    before = snapshot(laptop.conn)
    dialer = devices.end(laptop, expected=phone.node_id, url="ws://phone")
    answerer = devices.end(impostor)

    exchange(dialer, answerer)

    (failure,) = dialer.failures()
    assert (failure.code, failure.close_code, failure.remote) == ("wrong_peer", CLOSE_POLICY, False)
    assert failure.message == (
        f"ws://phone answered as {impostor.node_id}, not the paired {phone.node_id}"
    )
    assert dialer.session.close_code == CLOSE_POLICY
    assert_unchanged(before, laptop.conn)
    assert dialer.status(phone.node_id)["last_error"] == failure.message
    assert dialer.status(impostor.node_id) == {}
    assert not any(h.authenticated for _, h in dialer.handled)
    assert dialer.handler.result.peer == phone.node_id


def test_entries_beyond_twice_the_window_are_held_back_and_named_by_the_receiver(
    devices: Devices,
) -> None:
    """The sender stops the origin's stream below the receiver's limit (sync/held_back.py):
    nothing is refused, the round is quiet, and the receiver names the device whose clock is
    ahead in the link's result, its status and the log."""
    laptop, phone = devices.replica("laptop"), devices.replica("phone")
    phone.remember("phone", "wrote", "on time")
    phone.time.advance(11 * MINUTE)  # past twice the window
    phone.remember("phone", "wrote", "from the future")
    phone.time.advance(-11 * MINUTE)  # the clock is corrected; the stamp stays ahead
    dialer = devices.end(laptop, expected=phone.node_id, url="ws://phone")
    server = devices.end(phone)

    exchange(dialer, server)

    assert not dialer.failures() and not server.failures()
    assert dialer.session.quiet and server.session.quiet
    assert dialer.status(phone.node_id)["rows_received"] == 1  # the entry within reach
    told = dialer.handler.result.error
    assert dialer.handler.result.error_code == "clock_skew"
    assert told is not None and phone.node_id[:8] in told and "held back" in told
    assert dialer.status(phone.node_id)["last_error"] == told


def test_a_page_beyond_the_receivers_limit_is_refused_and_leaves_the_store_as_it_was(
    devices: Devices,
) -> None:
    """A receiver whose window is smaller than the sender thinks refuses the page, as before."""
    laptop, phone = devices.replica("laptop"), devices.replica("phone")
    laptop.remember("laptop", "has", "something")
    phone.time.advance(5 * MINUTE)  # within the sender's reach, past the receiver's 2 min
    phone.remember("phone", "wrote", "from the future")
    phone.time.advance(-5 * MINUTE)  # the clock is corrected; the stamp stays ahead
    before = snapshot(laptop.conn)
    dialer = devices.end(laptop, expected=phone.node_id, url="ws://phone",
                         max_skew_ms=lambda: MINUTE)  # fmt: skip
    server = devices.end(phone)

    exchange(dialer, server)

    refused = [h.refused for e, h in dialer.handled if isinstance(e, PageReceived)]
    assert refused == ["clock_skew"]
    (failure,) = dialer.failures()
    assert (failure.code, failure.close_code) == ("clock_skew", CLOSE_POLICY)
    assert phone.node_id[:8] in failure.message  # the origin, by its short id
    assert_unchanged(before, laptop.conn)
    status = dialer.status(phone.node_id)
    assert status["last_error"] == failure.message and status["rows_received"] == 0
    assert server.session.state >= State.CLOSING  # it heard the error frame


def test_a_page_the_store_fails_on_midway_leaves_none_of_its_rows(devices: Devices) -> None:
    """A refused page rolls its transaction back: rows written before the failure go with it."""
    laptop, phone = devices.replica("laptop"), devices.replica("phone")
    phone.remember("phone", "wrote", "first")
    phone.remember("phone", "wrote", "poison")
    laptop.conn.execute(
        "CREATE TEMP TRIGGER poison BEFORE INSERT ON facts WHEN NEW.object = 'poison' "
        "BEGIN SELECT RAISE(ABORT, 'disk says no'); END"
    )
    before = snapshot(laptop.conn)
    dialer = devices.end(laptop, expected=phone.node_id, url="ws://phone")

    exchange(dialer, devices.end(phone))

    (failure,) = dialer.failures()
    assert (failure.code, failure.close_code) == ("storage_error", CLOSE_INTERNAL)
    assert failure.message.startswith("write failed: ") and "disk says no" in failure.message
    assert_unchanged(before, laptop.conn)
    assert laptop.conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0


def test_a_peer_unpaired_after_the_handshake_gets_no_more_data(devices: Devices) -> None:
    laptop, phone = devices.replica("laptop"), devices.replica("phone")
    dialer = devices.end(laptop, expected=phone.node_id, url="ws://phone")
    server = devices.end(phone)
    exchange(dialer, server)
    assert server.session.quiet

    devices.paired.discard(laptop.node_id)  # the phone's settings were reloaded
    phone.remember("phone", "wrote", "after unpairing")
    server.session.local_changed()
    exchange(dialer, server)

    (failure,) = server.failures()
    assert failure.code == "not_paired" and failure.close_code == CLOSE_POLICY
    assert failure.message == f"node {laptop.node_id} is no longer paired with {phone.node_id}"
    assert laptop.conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0


def test_a_handshake_refusal_is_recorded_against_the_paired_peer_that_offered_itself(
    devices: Devices,
) -> None:
    """The accepting side knows nobody before the handshake: a paired peer refused there
    (here for a wall clock an hour ahead) still gets the refusal in its status."""
    server_replica, phone = devices.replica("server"), devices.replica("phone")
    phone.time.advance(60 * MINUTE)
    server = devices.end(server_replica)

    exchange(devices.end(phone, expected=server_replica.node_id, url="ws://server"), server)

    (failure,) = server.failures()
    assert failure.code == "clock_skew"
    assert server.handler.result.peer == phone.node_id
    assert server.status(phone.node_id)["last_error"] == failure.message
    assert server.status(phone.node_id)["errors"] == 1


def test_an_unpaired_node_refused_at_the_handshake_leaves_no_status(devices: Devices) -> None:
    server_replica, stranger = devices.replica("server"), devices.replica("stranger")
    devices.paired.discard(stranger.node_id)
    server = devices.end(server_replica)

    exchange(devices.end(stranger, expected=server_replica.node_id, url="ws://server"), server)

    assert [f.code for f in server.failures()] == ["not_paired"]
    assert server.handler.result.peer is None
    assert peer_statuses(server_replica.conn) == {}


def restore_from(replica: Replica, backup: Path) -> None:
    """Replace the replica's database with an older copy; its clock runs on (the clock mark
    kept beside the database outlives a restore)."""
    path = replica.conn.execute("PRAGMA database_list").fetchone()[2]
    replica.conn.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(backup, path)
    replica.conn = open_sync(path, synchronous="NORMAL")


def test_a_hole_found_at_catch_up_is_repaired_from_the_start_of_the_origin(
    devices: Devices, tmp_path: Path
) -> None:
    """The phone's database is restored from a copy older than what the server holds of the
    phone: the entry counts at the end of the round show the hole, and the phone takes its own
    log again from the start."""
    server_replica, phone = devices.replica("server"), devices.replica("phone")
    phone.remember("phone", "wrote", "before the backup")
    backup = tmp_path / "phone.backup"
    phone.conn.execute("VACUUM INTO ?", (str(backup),))
    lost = phone.remember("phone", "wrote", "after the backup")
    exchange(devices.end(phone, expected=server_replica.node_id), devices.end(server_replica))
    restore_from(phone, backup)
    phone.remember("phone", "wrote", "after the restore")

    dialer = devices.end(phone, expected=server_replica.node_id, url="ws://server")
    server = devices.end(server_replica)
    exchange(dialer, server)
    # The server's CaughtUp of this round predates the page it took from the phone: the next
    # anti-entropy pass (feral serve runs one every minute) brings the counts that show the hole.
    dialer.handler.anti_entropy(phone.conn)
    exchange(dialer, server)

    assert [h.holes for _, h in dialer.handled if h.holes] == [frozenset({phone.node_id})]
    assert dialer.failures() == [] and dialer.session.quiet
    assert_converged(phone, server_replica)
    held = phone.conn.execute("SELECT id FROM facts WHERE id = ?", (lost["id"],)).fetchall()
    assert held == [(lost["id"],)]


def test_only_a_request_for_deltas_is_answered_without_a_write() -> None:
    from feral.sync.session import (
        Authenticated,
        DeltasRequested,
        PageAcked,
        PeerCaughtUp,
    )

    assert not writes(DeltasRequested({}, 10))
    others: list[Callable[[], Event]] = [
        lambda: Authenticated(NodeId("p"), "p", "e", 0),
        lambda: PageAcked(NodeId("p"), 1, 1),
        lambda: PeerCaughtUp({}),
        lambda: Failed("x", "y", False, CLOSE_POLICY),
    ]
    assert all(writes(make()) for make in others)


def test_a_failed_local_push_during_answer_request_fails_the_link_instead_of_muting_it(
    devices: Devices,
) -> None:
    """A read that fails while a live push is being answered must not leave the request open.

    The session marks a request open until the handler answers it; an answer that raised left
    it open for good, so the link stayed up and never pushed again. Now the link is refused
    with ``storage_error`` (1011), and whoever dialled reconnects.
    """
    laptop, phone = devices.replica("laptop"), devices.replica("phone")
    dialer = devices.end(laptop, expected=phone.node_id, url="ws://phone")
    server = devices.end(phone)
    exchange(dialer, server)
    assert server.session.quiet
    phone.remember("phone", "wrote", "after the round")

    def deny_log_reads(action: int, table: str | None, *_: object) -> int:
        denied = action == sqlean.SQLITE_READ and table == "delta_log"
        return sqlean.SQLITE_DENY if denied else sqlean.SQLITE_OK

    phone.conn.set_authorizer(deny_log_reads)  # type: ignore[attr-defined]
    server.session.local_changed()
    pump(server)
    phone.conn.set_authorizer(None)  # type: ignore[attr-defined]

    (failure,) = server.failures()
    assert (failure.code, failure.close_code) == ("storage_error", CLOSE_INTERNAL)
    assert "access to delta_log.hlc is prohibited" in failure.message
    assert server.session.state is State.CLOSING
    assert server.status(laptop.node_id)["last_error"] == failure.message


def test_a_bookkeeping_write_that_fails_refuses_the_link_and_sends_no_ack(
    devices: Devices,
) -> None:
    """The page was applied, then counting its rows failed: the whole event rolled back, so the
    ack the handler had queued must not go out, only the Error (node/links/peer.py and the simulated
    devices both end a link so, through ``store_failed``)."""
    laptop, phone = devices.replica("laptop"), devices.replica("phone")
    phone.remember("phone", "wrote", "first")
    laptop.conn.execute(
        "CREATE TEMP TRIGGER full BEFORE UPDATE OF rows_received ON peer_status "
        "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
    )
    dialer = devices.end(laptop, expected=phone.node_id, url="ws://phone")

    with pytest.raises(StorageError, match="disk is full") as raised:
        exchange(dialer, devices.end(phone))
    dialer.handler.store_failed(str(raised.value))

    sent = [decode_message(frame) for frame in dialer.session.frames_to_send()]
    assert sent == [ErrorMessage("storage_error", str(raised.value))]
    assert dialer.session.state is State.CLOSING
    assert dialer.session.close_code == CLOSE_INTERNAL
    assert dialer.session.events_received() == []  # our own refusal is not answered
    assert dialer.handler.result.error_code == "storage_error"
    assert laptop.conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0


def test_the_failure_log_tells_each_failure_once_until_the_link_is_up_again() -> None:
    failures = FailureLog(logging.getLogger("tests.failure_log"))
    told = [failures.failed("phone", "disk full"), failures.failed("phone", "disk full")]
    failures.recovered("phone")
    told.append(failures.failed("phone", "disk full"))
    assert told == [True, False, True]
