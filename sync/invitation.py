"""Pairing by invitation, without I/O: the link, the proof, the verdict and the rate limit.

An invitation is three things: the URL to dial, the inviter's node id (which pins the link to
the inviter, as a paired id does) and a random secret of :data:`SECRET_BYTES` bytes. The secret
never travels and is never stored: both sides derive an Ed25519 key from it
(:func:`invitation_seed`); the inviter keeps only the public half (the *invitation key*), which
can check a proof but not make one, and the joiner signs the join transcript with the private
half (:func:`join_transcript`). The transcript covers both node ids, both handshake nonces and
the invitation key, so a proof convinces one inviter, in one connection, of one joiner, and is
worth nothing replayed (docs/PROTOCOL.md §4, "Pairing by invitation").

The session (sync/session.py) carries the :class:`Join` message and raises
``JoinOffered``; the node looks the invitation key up in its database, judges it with
:func:`judge_invitation`, counts failures in a :class:`JoinLimiter`, and answers with
``accept_join`` or a refusal. The signing itself is injected, as for the node's own key.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar
from urllib.parse import parse_qs, quote, urlsplit

from .delta import check_node_id
from .errors import DecodeError, FeralError, InvalidInput
from .events import JoinOffered
from .types import NodeId

__all__ = [
    "INVITATION_KEY_BYTES",
    "JOIN_LABEL",
    "PROOF_BYTES",
    "REFUSED",
    "SECRET_BYTES",
    "Invitation",
    "InvitationRecord",
    "Join",
    "JoinClaim",
    "JoinGate",
    "JoinLimiter",
    "format_secret",
    "invitation_seed",
    "join_transcript",
    "judge_invitation",
    "parse_expiry",
    "not_paired_text",
    "parse_invitation",
]

SECRET_BYTES = 20
"""160 random bits: 32 characters of base32, like a node id. Guessing is hopeless (2¹⁶⁰)."""

INVITATION_KEY_BYTES = 32
PROOF_BYTES = 64
JOIN_LABEL = b"feral-sync-join-v1\x00"
SEED_LABEL = b"feral-invitation-key-v1\x00"
REFUSED = "invitation_refused"
"""The one error code of every refused join; the message says why."""

_CLOSE_PROTOCOL = 1002
_CLOSE_POLICY = 1008
"""The session's close codes (sync/session.py imports this module, not the reverse)."""
_SECRET_RE = re.compile(r"[a-z2-7]{32}")
_SCHEME = "feral"


def format_secret(secret: bytes) -> str:
    """The secret as people copy it: lower-case base32 without padding."""
    return base64.b32encode(secret).decode("ascii").lower().rstrip("=")


def _parse_secret(text: str) -> bytes:
    if not _SECRET_RE.fullmatch(text):
        raise InvalidInput("the invitation's secret must be 32 characters of a-z and 2-7")
    return base64.b32decode(text.upper())


def invitation_seed(secret: bytes) -> bytes:
    """The 32-byte Ed25519 seed both sides derive from the secret (labelled, one way)."""
    return hashlib.sha256(SEED_LABEL + secret).digest()


def join_transcript(
    joiner: NodeId,
    inviter: NodeId,
    inviter_nonce: bytes,
    joiner_nonce: bytes,
    invitation_key: bytes,
) -> bytes:
    """The bytes the joiner signs with the invitation's key: who joins whom, in which session."""
    return b"".join(
        (JOIN_LABEL, joiner.encode(), inviter.encode(), inviter_nonce, joiner_nonce,
         invitation_key)
    )  # fmt: skip


@dataclass(frozen=True)
class Invitation:
    """What the joiner needs: where to dial, whom to expect there, and the secret."""

    url: str
    inviter: NodeId
    secret: bytes = field(repr=False)

    def link(self) -> str:
        """The whole invitation as one ``feral://join?...`` link."""
        return (
            f"{_SCHEME}://join?url={quote(self.url, safe='')}&node={self.inviter}"
            f"&secret={format_secret(self.secret)}"
        )


def parse_invitation(text: str) -> Invitation:
    """Read a ``feral://join?url=...&node=...&secret=...`` link.

    Raises:
        InvalidInput: not such a link, or one of its parts is malformed (the message says
            which, never echoing the secret).
    """
    parts = urlsplit(text.strip())
    if parts.scheme != _SCHEME or parts.netloc != "join":
        raise InvalidInput("not a feral invitation: it must start with feral://join?")
    try:
        query = parse_qs(parts.query, strict_parsing=True)
    except ValueError:
        raise InvalidInput("the invitation link is damaged (its query does not parse)") from None
    values = {key: value[0] for key, value in query.items() if len(value) == 1}
    missing = [key for key in ("url", "node", "secret") if key not in values]
    if missing or len(values) != len(query):
        raise InvalidInput(f"the invitation link lacks {', '.join(missing) or 'single values'}")
    url = values["url"]
    if urlsplit(url).scheme not in ("ws", "wss") or not urlsplit(url).hostname:
        raise InvalidInput(f"the invitation's url must be ws:// or wss:// with a host: {url!r}")
    try:
        inviter = check_node_id(values["node"])
    except FeralError:
        raise InvalidInput("the invitation's node id is malformed") from None
    return Invitation(url, inviter, _parse_secret(values["secret"]))


@dataclass(frozen=True)
class Join:
    """The joiner's proof, sent after the inviter's Hello and before its own Auth.

    Attributes:
        invitation_key: the public key derived from the invitation's secret (the inviter looks
            the invitation up by it).
        proof: the signature, with the derived private key, over :func:`join_transcript`.
    """

    KIND: ClassVar[int] = 9
    invitation_key: bytes
    proof: bytes = field(repr=False)

    def to_fields(self) -> list[object]:
        return [self.invitation_key, self.proof]

    @classmethod
    def from_fields(cls, fields: list[object]) -> Join:
        if len(fields) != 2:
            raise DecodeError(f"join has {len(fields)} fields, expected 2")
        key, proof = fields
        if not isinstance(key, bytes) or len(key) != INVITATION_KEY_BYTES:
            raise DecodeError(f"invitation key must be {INVITATION_KEY_BYTES} bytes")
        if not isinstance(proof, bytes) or len(proof) != PROOF_BYTES:
            raise DecodeError(f"join proof must be {PROOF_BYTES} bytes")
        return cls(key, proof)


@dataclass(frozen=True)
class JoinClaim:
    """The joiner's side of a session: the inviter it expects, and how to prove the secret.

    Attributes:
        inviter: the invitation's node id; any other node answering is refused.
        invitation_key: the public half of the key derived from the secret.
        prove: signs a transcript with the private half.
    """

    inviter: NodeId
    invitation_key: bytes
    prove: Callable[[bytes], bytes] = field(repr=False)

    def message(self, joiner: NodeId, inviter_nonce: bytes, joiner_nonce: bytes) -> Join:
        """The Join for this session (the inviter's nonce comes from its Hello)."""
        signed = join_transcript(joiner, self.inviter, inviter_nonce, joiner_nonce,
                                 self.invitation_key)  # fmt: skip
        return Join(self.invitation_key, self.prove(signed))


@dataclass(frozen=True)
class InvitationRecord:
    """What the inviter stored of one invitation (storage/link/invitations.py)."""

    label: str
    expires_ms: int
    used_ms: int | None = None
    used_by: NodeId | None = None


def judge_invitation(record: InvitationRecord | None, now_ms: int) -> str | None:
    """Why a proven invitation key may not join now, or ``None`` when it may.

    The words go to the joiner and to the inviter's log: they never hold the secret.
    """
    if record is None:
        return (
            "no invitation here matches (a wrong or mistyped secret, or an invitation this "
            "device did not make)"
        )
    if record.used_ms is not None:
        who = f" by {record.used_by}" if record.used_by else ""
        return f"this invitation was already used{who}; ask for a new one (feral sync invite)"
    if now_ms >= record.expires_ms:
        ago_s = (now_ms - record.expires_ms) // 1000
        return f"this invitation expired {ago_s} s ago; ask for a new one (feral sync invite)"
    return None


class JoinLimiter:
    """Refuses every join for a while after too many failed ones (brute force, noise).

    A 160-bit secret cannot be guessed anyway; the limit keeps a stranger from filling the log
    and spending the inviter's CPU. After ``max_failures`` refused joins within ``window_ms``,
    every join attempt is refused for ``lockout_ms``, whatever it proves. The clock is the
    caller's.
    """

    def __init__(
        self, max_failures: int = 5, window_ms: int = 60_000, lockout_ms: int = 300_000
    ) -> None:
        self.max_failures = max_failures
        self.window_ms = window_ms
        self.lockout_ms = lockout_ms
        self._failures: deque[int] = deque()
        self._locked_until = 0

    def refusal(self, now_ms: int) -> str | None:
        """Why no join may be tried now, or ``None``."""
        if now_ms < self._locked_until:
            left_s = -(-(self._locked_until - now_ms) // 1000)
            return f"too many failed joins here; joins are refused for {left_s} s more"
        return None

    def failed(self, now_ms: int) -> None:
        """A join was refused: count it, and lock joins out once there are too many."""
        self._failures.append(now_ms)
        while self._failures and self._failures[0] <= now_ms - self.window_ms:
            self._failures.popleft()
        if len(self._failures) >= self.max_failures:
            self._locked_until = now_ms + self.lockout_ms
            self._failures.clear()


def not_paired_text(peer: NodeId, local: NodeId) -> str:
    """The refusal of a peer that is not paired and proved no invitation."""
    return (
        f"node {peer} is not paired with {local}; pair on both devices with: feral sync "
        "peers add [URL] --node-id ID (or feral sync invite, then feral sync join)"
    )


@dataclass
class JoinGate:
    """The inviter's side of one unpaired peer's handshake: its Join first, then its Auth.

    The session holds one while such a peer is in its handshake, feeds it each message, and
    sends nothing of its own (not even its Auth) until the node accepts the join.
    """

    joiner: NodeId
    inviter: NodeId
    inviter_nonce: bytes = field(repr=False)
    joiner_nonce: bytes = field(repr=False)
    verify: Callable[[bytes, bytes, bytes], bool] = field(repr=False)
    join: Join | None = None
    offered: bool = False
    """The joiner's Auth verified and :class:`JoinOffered` went to the node."""

    def receive(self, message: object) -> tuple[str, str, int] | None:
        """A refusal ``(code, message, close code)`` for ``message``, or ``None``: a Join whose
        proof verified was kept, or an Auth followed one (the session verifies it, then
        :meth:`offer`)."""
        if isinstance(message, Join) and self.join is None:
            signed = join_transcript(self.joiner, self.inviter, self.inviter_nonce,
                                     self.joiner_nonce, message.invitation_key)  # fmt: skip
            if not self.verify(message.invitation_key, signed, message.proof):
                return REFUSED, "the invitation proof does not verify", _CLOSE_POLICY
            self.join = message
            return None
        kind = type(message).__name__
        if kind == "Auth" and self.join is None:  # no invitation: an unpaired peer
            return "not_paired", not_paired_text(self.joiner, self.inviter), _CLOSE_POLICY
        if kind == "Auth" and not self.offered:
            return None
        return "protocol_error", f"unexpected {kind} in a join", _CLOSE_PROTOCOL

    def offer(self, name: str) -> JoinOffered:
        """The joiner's Auth verified: what the node is asked to judge."""
        assert self.join is not None
        self.offered = True
        return JoinOffered(self.joiner, name, self.join.invitation_key)


_DURATION_RE = re.compile(r"(\d{1,6})\s*(s|m|min|h|d)")
_DURATION_MS = {"s": 1_000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
MAX_EXPIRY_MS = 7 * 86_400_000
"""An invitation lives a week at most: it is a one-step pairing, not a standing credential."""


def parse_expiry(text: str) -> int:
    """``"15m"``, ``"30s"``, ``"2h"``, ``"1d"`` in milliseconds (1 s up to 7 days).

    Raises:
        InvalidInput: anything else.
    """
    match = _DURATION_RE.fullmatch(text.strip().lower())
    ms = int(match[1]) * _DURATION_MS[match[2]] if match else 0
    if not 1_000 <= ms <= MAX_EXPIRY_MS:
        raise InvalidInput(
            f"--expires must be a duration from 1s to 7d such as 30s, 15m, 2h or 1d, got {text!r}"
        )
    return ms
