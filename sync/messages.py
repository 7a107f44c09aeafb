"""The messages of the ``/sync`` protocol (docs/PROTOCOL.md), as frozen dataclasses.

Each message knows its wire kind, turns itself into a list of plain fields, is rebuilt from one,
and checks itself. The codec adds the protocol version and the kind, and validates every message
it decodes, so the session only ever sees well-formed messages. :class:`feral.sync.delta.Page` is
the message that carries deltas; it is encoded by the codec directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from .delta import check_node_id
from .errors import DecodeError
from .hlc import MAX_PACKED
from .types import NodeId, VersionVector
from .versions import FIRST_NEGOTIATING, ProtocolRange

__all__ = [
    "NONCE_BYTES",
    "Ack",
    "Auth",
    "CaughtUp",
    "ErrorMessage",
    "Hello",
    "Pending",
    "Vector",
]

NONCE_BYTES = 32
MAX_ORIGINS = 10_000
MAX_NAME = 64
MAX_ERROR_TEXT = 1_000
DIGEST_BYTES = 32


def _int(value: object, what: str, low: int = 0, high: int = MAX_PACKED) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise DecodeError(f"{what} must be an integer in {low}..{high}")
    return value


def _bytes(value: object, what: str, size: int) -> bytes:
    if not isinstance(value, bytes) or len(value) != size:
        raise DecodeError(f"{what} must be {size} bytes")
    return value


def _text(value: object, what: str, limit: int) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise DecodeError(f"{what} must be text of at most {limit} characters")
    return value


def _fields(fields: list[object], count: int, name: str) -> list[object]:
    if len(fields) != count:
        raise DecodeError(f"{name} has {len(fields)} fields, expected {count}")
    return fields


@dataclass(frozen=True)
class Hello:
    """The first message each side sends: who it is and what it speaks.

    Attributes:
        node_id: the sender's id, which must be the fingerprint of ``public_key``.
        public_key: the sender's raw Ed25519 public key (32 bytes).
        schema_version: the replicated schema the sender stores.
        epoch: the random id of the sender's log (a new database has a new epoch).
        wall_ms: the sender's wall clock, compared against the skew window.
        nonce: fresh random bytes; the other side signs them, so an old handshake cannot
            be replayed.
        name: the sender's display name.
        protocol_low, protocol_high: the protocol versions the sender speaks (from version 3;
            a version-2 Hello, which has no such fields, speaks only 2: sync/versions.py).
    """

    KIND: ClassVar[int] = 2
    FIELDS: ClassVar[int] = 9
    node_id: NodeId
    public_key: bytes
    schema_version: int
    epoch: str
    wall_ms: int
    nonce: bytes
    name: str
    protocol_low: int = FIRST_NEGOTIATING
    protocol_high: int = FIRST_NEGOTIATING

    @property
    def protocols(self) -> ProtocolRange:
        return ProtocolRange(self.protocol_low, self.protocol_high)

    def to_fields(self) -> list[object]:
        return [self.node_id, self.public_key, self.schema_version, self.epoch,
                self.wall_ms, self.nonce, self.name, self.protocol_low,
                self.protocol_high]  # fmt: skip

    @classmethod
    def from_fields(cls, fields: list[object]) -> Hello:
        node_id, key, schema, epoch, wall, nonce, name, low, high = _fields(
            fields, cls.FIELDS, "hello"
        )
        spoken = ProtocolRange(_int(low, "lowest protocol version", 1, 1 << 16),
                               _int(high, "highest protocol version", 1, 1 << 16))  # fmt: skip
        return cls(
            check_node_id(node_id),
            _bytes(key, "public key", 32),
            _int(schema, "schema version", 1, 1 << 16),
            _text(epoch, "epoch", 64),
            _int(wall, "wall clock", 0, 1 << 47),
            _bytes(nonce, "nonce", NONCE_BYTES),
            _text(name, "name", MAX_NAME),
            spoken.low,
            spoken.high,
        )


@dataclass(frozen=True)
class Auth:
    """Proof of identity: the sender's signature over the handshake transcript."""

    KIND: ClassVar[int] = 3
    signature: bytes

    def to_fields(self) -> list[object]:
        return [self.signature]

    @classmethod
    def from_fields(cls, fields: list[object]) -> Auth:
        (signature,) = _fields(fields, 1, "auth")
        return cls(_bytes(signature, "signature", 64))


@dataclass(frozen=True)
class Vector:
    """What the sender holds, per origin: "send me everything above this"."""

    KIND: ClassVar[int] = 4
    vector: VersionVector

    def to_fields(self) -> list[object]:
        return [dict(sorted(self.vector.items()))]

    @classmethod
    def from_fields(cls, fields: list[object]) -> Vector:
        (raw,) = _fields(fields, 1, "vector")
        if not isinstance(raw, dict) or len(raw) > MAX_ORIGINS:
            raise DecodeError(f"a vector must be a map of at most {MAX_ORIGINS} origins")
        return cls({check_node_id(k): _int(v, "vector entry") for k, v in raw.items()})


@dataclass(frozen=True)
class Ack:
    """The receiver applied and committed a page: it now holds ``origin`` up to ``hlc``."""

    KIND: ClassVar[int] = 5
    origin: NodeId
    hlc: int

    def to_fields(self) -> list[object]:
        return [self.origin, self.hlc]

    @classmethod
    def from_fields(cls, fields: list[object]) -> Ack:
        origin, hlc = _fields(fields, 2, "ack")
        return cls(check_node_id(origin), _int(hlc, "ack hlc"))


@dataclass(frozen=True)
class CaughtUp:
    """The sender has sent everything the receiver lacked, as of ``vector`` (the sender's).

    ``entries`` counts, per origin, the log entries the sender holds. Equal vector entries with
    different counts mean one side's copy of that origin's log has a hole (a database restored
    from an older copy); the side with fewer entries asks for that origin again from the start.

    ``digest`` is the digest of the sender's replicated rows (storage/log/row_digest.py), or empty.
    When both vectors and all counts are equal, a differing digest means the two nodes hold
    other rows for the same entries: divergence (a forged entry that reached one side first),
    which vectors and counts cannot show.
    """

    KIND: ClassVar[int] = 6
    vector: VersionVector
    entries: dict[NodeId, int] = field(default_factory=dict)
    digest: bytes = b""

    def to_fields(self) -> list[object]:
        return [*Vector(self.vector).to_fields(), *Vector(self.entries).to_fields(), self.digest]

    @classmethod
    def from_fields(cls, fields: list[object]) -> CaughtUp:
        vector, entries, digest = _fields(fields, 3, "caught-up")
        if digest != b"":
            digest = _bytes(digest, "row digest", DIGEST_BYTES)
        return cls(Vector.from_fields([vector]).vector, Vector.from_fields([entries]).vector,
                   digest)  # fmt: skip

    def same_holdings(self, other: CaughtUp | None) -> bool:
        """Whether ``other`` names the same vector and entry counts (the digest aside: a
        difference there is divergence, reported, not a transfer still to make)."""
        return other is not None and (self.vector, self.entries) == (other.vector, other.entries)


@dataclass(frozen=True)
class Pending:
    """The sender is about to stream ``entries`` log entries the receiver lacks (as of the
    receiver's last Vector): the receiver's to-receive backlog, and the total of its progress."""

    KIND: ClassVar[int] = 8
    entries: int

    def to_fields(self) -> list[object]:
        return [self.entries]

    @classmethod
    def from_fields(cls, fields: list[object]) -> Pending:
        (entries,) = _fields(fields, 1, "pending")
        return cls(_int(entries, "pending entries"))


@dataclass(frozen=True)
class ErrorMessage:
    """A refusal, sent just before closing: a machine-readable code and a sentence."""

    KIND: ClassVar[int] = 7
    code: str
    message: str

    def to_fields(self) -> list[object]:
        return [self.code, self.message]

    @classmethod
    def from_fields(cls, fields: list[object]) -> ErrorMessage:
        code, message = _fields(fields, 2, "error")
        return cls(_text(code, "error code", 64), _text(message, "error text", MAX_ERROR_TEXT))
