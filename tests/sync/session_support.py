"""Helpers for driving :class:`feral.sync.session.SyncSession` without an event loop or a socket.

Nothing here imports node/ or storage/: tests/sync exercises the pure core. Keys are faked with
HMAC (a per-node secret, looked up from the public key by whoever verifies), the store is a dict
of rows plus a per-origin ordered log built on :func:`feral.sync.merge.wins`, and a :class:`Link`
shuttles the frames of one session into the other and answers every event the way a node does.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from feral.sync.codec import decode_message
from feral.sync.delta import Delta, Page
from feral.sync.errors import FeralError, ProtocolError
from feral.sync.hlc import HybridClock, check_skew
from feral.sync.merge import wins
from feral.sync.messages import Ack
from feral.sync.schema import FACTS
from feral.sync.session import (
    CLOSE_PROTOCOL,
    Authenticated,
    DeltasRequested,
    Event,
    Failed,
    LocalPeer,
    PageReceived,
    SyncSession,
)
from feral.sync.types import NodeId, RowId, VersionVector

__all__ = [
    "EPOCH_MS",
    "SKEW_MS",
    "FakeKeys",
    "Link",
    "ManualClock",
    "MemoryStore",
    "SimNode",
    "fact_values",
    "fingerprint",
    "messages",
    "peek",
]

EPOCH_MS = 1_700_000_000_000
"""Where every manual clock starts."""

SKEW_MS = 300_000
"""The skew window the simulated nodes use (FERAL's five minutes)."""


def fingerprint(public_key: bytes) -> NodeId:
    """A node id for a fake key, shaped like a real one: base32 of sha256(key)[:20], lower case."""
    digest = hashlib.sha256(public_key).digest()[:20]
    return NodeId(base64.b32encode(digest).decode("ascii").lower())


class FakeKeys:
    """A signature scheme that is not public-key crypto but behaves like one for the session.

    Signing is HMAC-SHA512 with a per-node secret (64 bytes, the size an Ed25519 signature has on
    the wire); verifying recomputes it with the secret looked up from the public key.
    """

    def __init__(self) -> None:
        self.secrets: dict[bytes, bytes] = {}

    def new_key(self, seed: str) -> tuple[bytes, bytes]:
        """A ``(public_key, secret)`` pair, registered for verification."""
        public = hashlib.sha256(b"public:" + seed.encode()).digest()
        secret = hashlib.sha256(b"secret:" + seed.encode()).digest()
        self.secrets[public] = secret
        return public, secret

    @staticmethod
    def signer(secret: bytes) -> Callable[[bytes], bytes]:
        return lambda data: hmac.new(secret, data, hashlib.sha512).digest()

    def verify(self, public_key: bytes, data: bytes, signature: bytes) -> bool:
        secret = self.secrets.get(public_key)
        if secret is None:
            return False
        return hmac.compare_digest(self.signer(secret)(data), signature)


class ManualClock:
    """A wall clock the test moves by hand."""

    def __init__(self, now: int = EPOCH_MS) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


class Gap(ProtocolError):
    """A page that does not continue from what the store holds for its origin."""


def fact_values(row_id: str, text: str) -> tuple[str, str, str, str, float, None, int, bool]:
    """A full ``facts`` row in column order."""
    return (row_id, "user", "note", text, 1.0, None, EPOCH_MS, False)


@dataclass
class MemoryStore:
    """Rows plus a per-origin ordered log: the in-memory stand-in for the node's database."""

    node_id: NodeId
    clock: HybridClock
    rows: dict[tuple[str, RowId], Delta] = field(default_factory=dict)
    log: dict[NodeId, list[Delta]] = field(default_factory=dict)
    written: list[Delta] = field(default_factory=list)
    """Every local write, in order (the property test's record of what was accepted)."""

    def write(self, row_id: str, text: str) -> Delta:
        """A local write: stamped by this node's clock above the row's stored version (as
        storage/memory/memories.py stamps: a received stamp never lifts the clock), merged,
        logged."""
        current = self.rows.get((FACTS.name, RowId(row_id)))
        hlc = self.clock.tick(0 if current is None else current.hlc)
        delta = Delta(FACTS.name, RowId(row_id), hlc, self.node_id, fact_values(row_id, text))
        self._merge(delta)
        self.written.append(delta)
        return delta

    def vector(self) -> VersionVector:
        return {origin: entries[-1].hlc for origin, entries in self.log.items() if entries}

    def changes_since(self, since: VersionVector, limit: int) -> list[Page]:
        """One page per origin with entries above ``since``, ``limit`` deltas in all."""
        pages = []
        budget = limit
        for origin, entries in sorted(self.log.items()):
            after = since.get(origin, 0)
            fresh = tuple(d for d in entries if d.hlc > after)[:budget]
            if fresh and budget > 0:
                pages.append(Page(origin, after, fresh))
                budget -= len(fresh)
        return pages

    def apply(self, page: Page) -> int:
        """Apply a page in one step; refuse it whole if it would leave a gap."""
        page.check()
        held = self.vector().get(page.origin, 0)
        if page.after > held:
            raise Gap(f"page for {page.origin} continues from {page.after}, held {held}")
        fresh = [d for d in page.deltas if d.hlc > held]
        for delta in page.deltas:
            check_skew(delta.hlc, self.clock.now_ms(), SKEW_MS, origin=page.origin)
        for delta in fresh:
            self._merge(delta)
        return len(fresh)

    def _merge(self, delta: Delta) -> None:
        key = (delta.table, delta.row_id)
        current = self.rows.get(key)
        if wins(delta.version, None if current is None else current.version):
            self.rows[key] = delta
        self.log.setdefault(delta.origin, []).append(delta)

    def snapshot(self) -> dict[tuple[str, RowId], tuple[int, NodeId, object]]:
        return {k: (d.hlc, d.origin, d.values) for k, d in self.rows.items()}


@dataclass
class SimNode:
    """One simulated device: a fake key, a manual wall clock, a pairing list and a store."""

    name: str
    keys: FakeKeys
    public_key: bytes = b""
    secret: bytes = b""
    node_id: NodeId = NodeId("")
    wall: ManualClock = field(default_factory=ManualClock)
    paired: set[NodeId] = field(default_factory=set)
    store: MemoryStore = field(init=False)
    sessions: int = 0

    def __post_init__(self) -> None:
        self.public_key, self.secret = self.keys.new_key(self.name)
        self.node_id = fingerprint(self.public_key)
        self.store = MemoryStore(self.node_id, HybridClock(self.node_id, self.wall))

    def local_peer(self, **overrides: object) -> LocalPeer:
        """What a session needs from this node; each call draws a fresh nonce."""
        self.sessions += 1
        nonce = hashlib.sha256(f"nonce:{self.name}:{self.sessions}".encode()).digest()
        fields: dict[str, object] = {
            "node_id": self.node_id,
            "public_key": self.public_key,
            "name": self.name,
            "epoch": f"epoch-{self.name}",
            "sign": FakeKeys.signer(self.secret),
            "verify": self.keys.verify,
            "fingerprint": fingerprint,
            "is_paired": self.paired.__contains__,
            "now_ms": self.wall,
            "max_skew_ms": SKEW_MS,
            "nonce": nonce,
        }
        fields.update(overrides)
        return LocalPeer(**fields)  # type: ignore[arg-type]

    def pair(self, *others: SimNode) -> None:
        """Pair both ways, as the user does on both devices."""
        for other in others:
            self.paired.add(other.node_id)
            other.paired.add(self.node_id)


def messages(frames: list[bytes]) -> list[object]:
    return [decode_message(f) for f in frames]


def peek(frame: bytes) -> object:
    """The message in ``frame``, or ``None`` if it does not decode (the receiver will refuse it)."""
    try:
        return decode_message(frame)
    except FeralError:
        return None


class Side:
    """One end of a :class:`Link`: a session and the node that answers its events."""

    def __init__(self, node: SimNode, session: SyncSession) -> None:
        self.node = node
        self.session = session
        self.events: list[Event] = []
        self.sent: list[bytes] = []
        self.pages_sent = 0
        self.acks_received = 0
        self.pages_received = 0
        self.acks_made = 0
        self.max_unacked = 0

    @property
    def failures(self) -> list[Failed]:
        return [e for e in self.events if isinstance(e, Failed)]

    @property
    def authenticated(self) -> list[Authenticated]:
        return [e for e in self.events if isinstance(e, Authenticated)]

    def answer(self) -> bool:
        """Act on every pending event as a node would; ``True`` if there were any."""
        acted = False
        while events := self.session.events_received():
            acted = True
            for event in events:
                self.events.append(event)
                self._answer(event)
        return acted

    def _answer(self, event: Event) -> None:
        session, store = self.session, self.node.store
        if isinstance(event, Authenticated):
            session.send_vector(store.vector())
        elif isinstance(event, DeltasRequested):
            pages = store.changes_since(event.since, event.limit)
            if pages:
                session.send_pages(pages)
            else:
                session.send_caught_up(store.vector())
        elif isinstance(event, PageReceived):
            try:
                store.apply(event.page)
            except ProtocolError as exc:
                session.fail("protocol_error", str(exc), CLOSE_PROTOCOL)
            else:
                session.ack(event.page)
                self.acks_made += 1

    def drain(self) -> list[bytes]:
        """Take the session's outgoing frames, counting pages in flight."""
        frames = self.session.frames_to_send()
        for frame in frames:
            if isinstance(peek(frame), Page):
                self.pages_sent += 1
        self.sent.extend(frames)
        self.max_unacked = max(self.max_unacked, self.pages_sent - self.acks_received)
        return frames

    def deliver(self, frames: list[bytes]) -> None:
        """Feed frames from the other side into this session."""
        for frame in frames:
            message = peek(frame)
            self.acks_received += isinstance(message, Ack)
            self.pages_received += isinstance(message, Page)
            self.session.receive_frame(frame)


class Link:
    """Two sessions wired back to back, one per node, each answered by its node's store.

    Args:
        a, b: the two nodes; ``a`` is the one whose frames are delivered first in each step.
        page_limit: deltas per page request, small to force many pages.
        check: called after every half-step with the link, e.g. to assert an invariant.
    """

    MAX_STEPS = 10_000

    def __init__(
        self,
        a: SimNode,
        b: SimNode,
        page_limit: int = 1000,
        check: Callable[[Link], None] | None = None,
        a_peer: LocalPeer | None = None,
        b_peer: LocalPeer | None = None,
    ) -> None:
        self.a = Side(a, SyncSession(a_peer or a.local_peer(), page_limit))
        self.b = Side(b, SyncSession(b_peer or b.local_peer(), page_limit))
        self.check = check
        self.steps = 0

    @property
    def sides(self) -> tuple[Side, Side]:
        return self.a, self.b

    @property
    def quiet(self) -> bool:
        return self.a.session.quiet and self.b.session.quiet

    def step(self) -> bool:
        """Answer events on both sides, then swap frames once; ``True`` if anything happened."""
        acted = False
        for side in self.sides:
            acted |= side.answer()
            self._check()
        to_b, to_a = self.a.drain(), self.b.drain()
        self.b.deliver(to_b)
        self._check()
        self.a.deliver(to_a)
        self._check()
        return acted or bool(to_a or to_b)

    def run(self) -> Link:
        """Step until nothing moves; fails if that takes more than :data:`MAX_STEPS` steps."""
        for _ in range(self.MAX_STEPS):
            self.steps += 1
            if not self.step():
                return self
        raise AssertionError(f"the link did not settle in {self.MAX_STEPS} steps")

    def _check(self) -> None:
        if self.check is not None:
            self.check(self)

    def events(self) -> Iterator[tuple[Side, Event]]:
        for side in self.sides:
            for event in side.events:
                yield side, event
