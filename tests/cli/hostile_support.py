"""What the hostile ``/sync`` suites share: one real ``feral serve`` and a probe that misbehaves.

The probe speaks the protocol through the real sans-I/O session (so its handshake is exactly a
peer's), then sends what a peer must not send and records how the server answers: the typed
error frames it sent and the close code it closed with (DESIGN §5: 1002 protocol, 1007 bad data,
1008 policy, 1009 too big).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from feral.node.home.identity import (
    Identity,
    identity_from_key,
    load_or_create_identity,
    sign,
    verify,
)
from feral.node.links.tls import client_context
from feral.sync.codec import decode_message, encode_message
from feral.sync.hlc import COUNTER_BITS
from feral.sync.ids import node_id_for
from feral.sync.messages import ErrorMessage, Hello, Vector
from feral.sync.schema import SCHEMA_VERSION
from feral.sync.session import Authenticated, LocalPeer, State, SyncSession
from feral.sync.types import NodeId

from .helpers import turn_off_embeddings
from .servers import FeralNode, Mesh, pair

TIMEOUT_S = 10.0
SERVER_FACT = "the server's fact"


@dataclass
class Target:
    """The server under attack, the paired client whose key the probe borrows, and the export
    taken before any case ran."""

    server: FeralNode
    client: FeralNode
    identity: Identity
    export: str
    second: Identity | None = None
    """A second paired device's key, when asked for, so two probes' errors can be told apart."""

    @property
    def url(self) -> str:
        return f"{self.server.url}/sync"

    @property
    def client_id(self) -> NodeId:
        return self.identity.node_id


@contextlib.contextmanager
def serving_target(
    root: Path,
    *,
    bulk_facts: int = 0,
    bulk_bytes: int = 0,
    second: bool = False,
    tls: bool = False,
) -> Iterator[Target]:
    """A running server paired with one client (two if ``second``); ``bulk_facts`` facts of
    ``bulk_bytes`` each give it more to stream than a socket buffer holds (embeddings off: only
    the bytes matter). With ``tls`` it serves ``wss://`` and the client dials that."""
    with Mesh(root) as mesh:
        names = ("server", "client", *(["second"] if second else []))
        server, *clients = mesh.add(*names, tls=tls)
        for client in clients:
            pair(server, client, dial=False)
        pair(clients[0], server, dial=True)
        server.cli("memory", "remember", SERVER_FACT)
        if bulk_facts:
            for node in (server, *clients):
                turn_off_embeddings(node.home)
            server.cli("memory", "import", str(bulk_file(root, bulk_facts, bulk_bytes)))
        mesh.start(server)
        identities = [load_or_create_identity(client.home) for client in clients]
        export = server.cli("memory", "export")
        yield Target(server, clients[0], identities[0], export, *identities[1:])


def bulk_file(root: Path, count: int, size: int) -> Path:
    path = root / "bulk.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for n in range(count):
            triple = {"subject": f"bulk {n}", "predicate": "holds", "object": f"{n} " + "x" * size}
            handle.write(json.dumps(triple) + "\n")
    return path


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def stamp(offset_ms: int = 0) -> int:
    """A packed HLC ``offset_ms`` from now."""
    return (now_ms() + offset_ms) << COUNTER_BITS


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
        now_ms=now_ms,
        max_skew_ms=300_000,
        nonce=secrets.token_bytes(32),
    )


def hello_for(
    identity: Identity, *, node_id: NodeId | None = None, wall_ms: int | None = None
) -> Hello:
    return Hello(
        node_id or identity.node_id,
        identity.public_key,
        SCHEMA_VERSION,
        "probe-epoch",
        now_ms() if wall_ms is None else wall_ms,
        secrets.token_bytes(32),
        "probe",
    )


def fresh_identity() -> Identity:
    return identity_from_key(Ed25519PrivateKey.generate())


def pack(*items: object) -> bytes:
    """A frame of ``items`` as one msgpack array, built by hand so it can break any rule."""
    data: bytes = msgpack.packb(list(items), use_bin_type=True)
    return data


def open_sync(url: str) -> connect:
    secure = client_context() if url.startswith("wss://") else None
    return connect(
        url,
        proxy=None,
        compression=None,
        max_size=None,
        open_timeout=TIMEOUT_S,
        close_timeout=5,
        ssl=secure,
    )


async def receive(ws: ClientConnection, timeout: float = TIMEOUT_S) -> bytes:
    """The server's next frame; every frame it sends is binary."""
    data = await asyncio.wait_for(ws.recv(), timeout)
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
    """How the server answered: its error frames, and the close code it sent (None: none)."""

    errors: list[ErrorMessage]
    close_code: int | None

    @property
    def codes(self) -> list[str]:
        return [e.code for e in self.errors]


async def provoke(target: Target, frames: Frames, *, authenticated: bool = False) -> Outcome:
    """Read the server's Hello (and authenticate, if asked), send ``frames(hello)``, and read
    until the server closes."""
    async with open_sync(target.url) as ws:
        if authenticated:
            session = SyncSession(local_peer(target.identity))
            await authenticate(ws, session)
            assert session.peer is not None
            server_hello = session.peer
        else:
            server_hello = decode_message(await receive(ws))
            assert isinstance(server_hello, Hello)
        with contextlib.suppress(ConnectionClosed):
            for frame in frames(server_hello):
                await ws.send(frame)
        return await outcome_of(ws)


async def outcome_of(ws: ClientConnection, timeout: float = TIMEOUT_S) -> Outcome:
    """Read until the server closes, waiting at most ``timeout`` for each frame."""
    errors = []
    try:
        while True:
            message = decode_message(await receive(ws, timeout))
            if isinstance(message, ErrorMessage):
                errors.append(message)
    except ConnectionClosed as exc:
        return Outcome(errors, exc.rcvd.code if exc.rcvd is not None else None)


def assert_outcome(outcome: Outcome, code: str | None, close_code: int) -> None:
    """Exactly one typed error with ``code`` (none if ``code`` is None), then ``close_code``."""
    assert outcome.close_code == close_code, outcome
    assert outcome.codes == ([] if code is None else [code]), outcome
    assert all(e.message for e in outcome.errors), outcome


def hello_frame(target: Target) -> bytes:
    return encode_message(hello_for(target.identity))


def assert_still_serving(target: Target) -> None:
    process = target.server.process
    assert process is not None and process.poll() is None, target.server.serve_log()


UVICORN_UTF8_REPORT = "Invalid UTF-8 sequence received from client."


def assert_no_crash_logged(target: Target) -> None:
    """No traceback in the server's log but the one uvicorn prints itself (and carries on
    after) for each text frame that is not UTF-8."""
    log = target.server.serve_log()
    assert log.count("Traceback") == log.count(UVICORN_UTF8_REPORT), log


def assert_synced_and_unchanged(target: Target) -> None:
    """After the hostile cases: a paired ``feral sync now`` works, and the server's rows are
    exactly what they were before the first case."""
    target.client.run("sync", "now")
    server_export = target.server.cli("memory", "export")
    assert server_export == target.export
    assert target.client.cli("memory", "export") == server_export
    assert SERVER_FACT in server_export
    assert_still_serving(target)
    assert_no_crash_logged(target)


# -- the HTTP API on the same port ------------------------------------------------------------


@dataclass
class Answer:
    status: int
    body: Any


def http_call(target: Target, path: str, body: bytes | None = None) -> Answer:
    """GET ``path`` (POST ``body`` as JSON if given) on the server's HTTP API."""
    server = target.server
    request = urllib.request.Request(
        f"https://localhost:{server.port}{path}"
        if server.tls
        else f"http://127.0.0.1:{server.port}{path}",
        data=body,
        headers={"Content-Type": "application/json"} if body is not None else {},
    )
    # Over TLS the client trusts the server's own certificate, as `curl --cacert` would.
    context = ssl.create_default_context(cafile=server.home / "node.crt") if server.tls else None
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S, context=context) as response:
            return Answer(response.status, json.loads(response.read()))
    except urllib.error.HTTPError as exc:
        with exc:
            return Answer(exc.code, json.loads(exc.read()))


@dataclass(frozen=True)
class ServerState:
    """What a refused frame must leave alone: the rows (digest), the clock and the vector."""

    state_digest: str
    hlc: int
    vector: dict[str, int]


async def server_state(target: Target) -> ServerState:
    answer = await asyncio.to_thread(http_call, target, "/api/sync/status")
    assert answer.status == 200, answer
    status = answer.body
    return ServerState(status["state_digest"], status["hlc"], status["vector"])
