"""Hostile ``/sync`` frames against one real ``feral serve`` process.

Each case opens a raw WebSocket, reads the server's Hello, sends something a peer must not send,
and expects a typed error frame and/or a close code (DESIGN §5: 1002 protocol, 1007 bad data,
1008 policy, 1009 too big). After every case a paired client still completes a handshake, and
the last test syncs through ``feral sync now`` and finds the server's rows unchanged.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import msgpack
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from node.identity import Identity, identity_from_key, load_or_create_identity, sign, verify
from sync.codec import MAX_FRAME_BYTES, PROTOCOL_VERSION, decode_message, encode_message
from sync.delta import Page
from sync.ids import node_id_for
from sync.messages import Auth, ErrorMessage, Hello, Vector
from sync.schema import SCHEMA_VERSION
from sync.session import Authenticated, LocalPeer, State, SyncSession
from sync.types import NodeId

from .servers import FeralNode, Mesh, pair

TIMEOUT_S = 10.0
FRAME_LIMIT = MAX_FRAME_BYTES + 1024


@dataclass
class Target:
    server: FeralNode
    client: FeralNode
    identity: Identity
    export: str

    @property
    def url(self) -> str:
        return f"{self.server.url}/sync"


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    with Mesh(tmp_path_factory.mktemp("hostile")) as mesh:
        server, client = mesh.add("server", "client")
        pair(server, client, dial=False)
        pair(client, server, dial=True)
        server.cli("memory", "remember", "the server's fact")
        mesh.start(server)
        identity = load_or_create_identity(client.home)
        yield Target(server, client, identity, server.cli("memory", "export"))


def local_peer(identity: Identity) -> LocalPeer:
    return LocalPeer(
        node_id=identity.node_id,
        public_key=identity.public_key,
        name="probe",
        epoch="probe-epoch",
        sign=lambda data: sign(identity, data),
        verify=verify,
        fingerprint=node_id_for,
        is_paired=lambda _: True,
        now_ms=lambda: time.time_ns() // 1_000_000,
        max_skew_ms=300_000,
        nonce=secrets.token_bytes(32),
    )


def hello_for(identity: Identity, *, node_id: NodeId | None = None) -> Hello:
    return Hello(
        node_id or identity.node_id,
        identity.public_key,
        SCHEMA_VERSION,
        "probe-epoch",
        time.time_ns() // 1_000_000,
        secrets.token_bytes(32),
        "probe",
    )


def fresh_identity() -> Identity:
    return identity_from_key(Ed25519PrivateKey.generate())


def open_sync(url: str) -> connect:
    return connect(
        url, proxy=None, compression=None, max_size=None, open_timeout=TIMEOUT_S, close_timeout=5
    )


async def receive(ws: ClientConnection) -> bytes:
    """The server's next frame; every frame it sends is binary."""
    data = await asyncio.wait_for(ws.recv(), TIMEOUT_S)
    assert isinstance(data, bytes), data
    return data


async def authenticate(ws: ClientConnection, session: SyncSession) -> list[bytes]:
    """Run ``session``'s handshake over ``ws``; returns the frames it sent (Hello, then Auth)."""
    sent = session.frames_to_send()
    for frame in sent:
        await ws.send(frame)
    while session.state is State.HANDSHAKE:
        session.receive_frame(await receive(ws))
        out = session.frames_to_send()
        for frame in out:
            await ws.send(frame)
        sent += out
    events = session.events_received()
    assert session.state is State.OPEN, events
    assert [type(e) for e in events] == [Authenticated]
    assert isinstance(decode_message(await receive(ws)), Vector)  # the server's, after its Auth
    return sent


async def handshake(target: Target) -> list[bytes]:
    """A paired client's whole handshake on a connection of its own."""
    async with open_sync(target.url) as ws:
        return await authenticate(ws, SyncSession(local_peer(target.identity)))


Frames = Callable[[Hello], Sequence[bytes | str]]
"""What a case sends, given the server's Hello."""


@dataclass
class Outcome:
    errors: list[ErrorMessage]
    close_code: int | None


async def provoke(target: Target, frames: Frames) -> Outcome:
    """Read the server's Hello, send ``frames(hello)``, and read until the server closes."""
    async with open_sync(target.url) as ws:
        first = decode_message(await receive(ws))
        assert isinstance(first, Hello)
        try:
            for frame in frames(first):
                await ws.send(frame)
        except ConnectionClosed:
            pass
        errors = []
        try:
            while True:
                message = decode_message(await receive(ws))
                if isinstance(message, ErrorMessage):
                    errors.append(message)
        except ConnectionClosed as exc:
            return Outcome(errors, exc.rcvd.code if exc.rcvd is not None else None)


def pack(*items: object) -> bytes:
    data: bytes = msgpack.packb(list(items), use_bin_type=True)
    return data


def hello_frame(target: Target) -> bytes:
    return encode_message(hello_for(target.identity))


Case = Callable[[Target], Awaitable[Frames]]


async def garbage(target: Target) -> Frames:
    return lambda _: [b"\xc1\xff this is not msgpack \x00\x01"]


async def truncated(target: Target) -> Frames:
    frame = hello_frame(target)
    return lambda _: [frame[: len(frame) // 2]]


async def text(target: Target) -> Frames:
    return lambda _: ["hello, I am a browser"]


async def unknown_kind(target: Target) -> Frames:
    return lambda _: [pack(PROTOCOL_VERSION, 99, "what is this")]


async def wrong_version(target: Target) -> Frames:
    hello = hello_for(target.identity)
    return lambda _: [pack(PROTOCOL_VERSION + 41, Hello.KIND, *hello.to_fields())]


async def ext_type(target: Target) -> Frames:
    return lambda _: [pack(PROTOCOL_VERSION, Hello.KIND, msgpack.ExtType(42, b"payload"))]


async def timestamp(target: Target) -> Frames:
    fields = hello_for(target.identity).to_fields()
    fields[4] = msgpack.Timestamp(int(time.time()), 0)
    return lambda _: [pack(PROTOCOL_VERSION, Hello.KIND, *fields)]


async def deep_nesting(target: Target) -> Frames:
    return lambda _: [b"\x93\x01\x04" + b"\x91" * 100_000 + b"\xc0"]


async def duplicate_keys(target: Target) -> Frames:
    return lambda _: [b"\x93\x01\x04\x82\xa1a\x01\xa1a\x02"]


async def trailing_bytes(target: Target) -> Frames:
    frame = hello_frame(target)
    return lambda _: [frame + b"\xc0"]


async def foreign_node_id(target: Target) -> Frames:
    other = fresh_identity().node_id
    return lambda _: [encode_message(hello_for(target.identity, node_id=other))]


async def unpaired_key(target: Target) -> Frames:
    stranger = fresh_identity()
    return lambda _: [encode_message(hello_for(stranger))]


async def server_own_identity(target: Target) -> Frames:
    def frames(server: Hello) -> Sequence[bytes | str]:
        hello = Hello(server.node_id, server.public_key, SCHEMA_VERSION, "probe-epoch",
                      time.time_ns() // 1_000_000, secrets.token_bytes(32), "probe")  # fmt: skip
        return [encode_message(hello)]

    return frames


async def auth_before_hello(target: Target) -> Frames:
    return lambda _: [encode_message(Auth(secrets.token_bytes(64)))]


async def vector_before_auth(target: Target) -> Frames:
    return lambda _: [hello_frame(target), encode_message(Vector({}))]


async def second_hello(target: Target) -> Frames:
    return lambda _: [hello_frame(target), hello_frame(target)]


async def forged_signature(target: Target) -> Frames:
    return lambda _: [hello_frame(target), encode_message(Auth(secrets.token_bytes(64)))]


async def replayed_handshake(target: Target) -> Frames:
    recorded = await handshake(target)
    assert len(recorded) == 2
    return lambda _: recorded


async def oversized(target: Target) -> Frames:
    return lambda _: [b"\x00" * (FRAME_LIMIT + 1024)]


CASES: list[tuple[Case, str | None, int]] = [
    (garbage, "bad_frame", 1007),
    (truncated, "bad_frame", 1007),
    (text, "bad_frame", 1007),
    (unknown_kind, "bad_frame", 1007),
    (wrong_version, "bad_frame", 1007),
    (ext_type, "bad_frame", 1007),
    (timestamp, "bad_frame", 1007),
    (deep_nesting, "bad_frame", 1007),
    (duplicate_keys, "bad_frame", 1007),
    (trailing_bytes, "bad_frame", 1007),
    (foreign_node_id, "auth_failed", 1008),
    (unpaired_key, "not_paired", 1008),
    (server_own_identity, "same_node", 1008),
    (auth_before_hello, "protocol_error", 1002),
    (vector_before_auth, "protocol_error", 1002),
    (second_hello, "protocol_error", 1002),
    (forged_signature, "auth_failed", 1008),
    (replayed_handshake, "auth_failed", 1008),
    (oversized, None, 1009),
]


@pytest.mark.parametrize(
    ("case", "code", "close_code"), CASES, ids=[case.__name__ for case, _, _ in CASES]
)
async def test_a_hostile_frame_is_refused_and_the_server_keeps_serving(
    target, case, code, close_code
):
    frames = await case(target)
    outcome = await provoke(target, frames)

    assert outcome.close_code == close_code, outcome
    if code is None:
        assert outcome.errors == []
    else:
        assert [e.code for e in outcome.errors] == [code], outcome
        assert outcome.errors[0].message
    assert target.server.process is not None and target.server.process.poll() is None
    assert len(await handshake(target)) == 2  # a paired peer is still served


async def test_a_paired_link_stays_open_while_another_connection_is_refused(target):
    async with open_sync(target.url) as ws:
        await authenticate(ws, SyncSession(local_peer(target.identity)))

        outcome = await provoke(target, await garbage(target))
        assert outcome.close_code == 1007

        await ws.send(encode_message(Vector({})))  # "I hold nothing": the server streams its rows
        page = decode_message(await receive(ws))
        assert isinstance(page, Page) and page.deltas
        assert page.origin == target.server.node_id


def test_after_every_hostile_frame_a_paired_sync_works_and_the_rows_are_unchanged(target):
    target.client.run("sync", "now")
    server_export = target.server.export()
    assert server_export == target.export
    assert target.client.export() == server_export
    assert "the server's fact" in server_export
    assert target.server.process is not None and target.server.process.poll() is None
    assert "Traceback" not in target.server.serve_log()
