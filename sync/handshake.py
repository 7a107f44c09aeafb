"""The handshake's pure parts: who this node is to a session, its Hello, the signed transcript,
and the checks a peer's Hello must pass, the protocol versions included (docs/PROTOCOL.md §4,
sync/versions.py). Kept apart from the session's flow (sync/session.py), which runs them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .codec import SPOKEN
from .invitation import JoinClaim, not_paired_text
from .messages import Hello
from .schema import BASE_SCHEMA
from .text import printable
from .types import NodeId
from .versions import ProtocolRange, mismatch_text

__all__ = ["TRANSCRIPT_LABEL", "LocalPeer", "hello_of", "refuse_hello", "transcript"]

TRANSCRIPT_LABEL = b"feral-sync-auth-v1\x00"


@dataclass(frozen=True)
class LocalPeer:
    """What the session needs to know about this node and its trust decisions (injected).

    Attributes:
        node_id: this node's id.
        public_key: this node's raw public key.
        name: this node's display name.
        epoch: the random id of this node's log.
        sign: signs bytes with this node's private key.
        verify: checks ``(public_key, data, signature)``; never raises.
        fingerprint: the node id belonging to a raw public key.
        is_paired: whether a node id may connect.
        now_ms: this node's wall clock.
        max_skew_ms: the skew window.
        nonce: fresh random bytes for this session's handshake.
        join: on a joining device, its invitation (sync/invitation.py): the only peer it
            takes, and the proof it sends that peer.
        accepts_joins: whether an unpaired peer may prove an invitation instead of being
            refused (asked at its Hello; none: never).
        protocols: the protocol versions this node speaks (tests give other ranges).
        schema_version: the replicated schema this node stores, said in its Hello (peers of
            other schema versions sync: PROTOCOL §10).
    """

    node_id: NodeId
    public_key: bytes
    name: str
    epoch: str
    sign: Callable[[bytes], bytes]
    verify: Callable[[bytes, bytes, bytes], bool]
    fingerprint: Callable[[bytes], NodeId]
    is_paired: Callable[[NodeId], bool]
    now_ms: Callable[[], int]
    max_skew_ms: int
    nonce: bytes = field(repr=False)
    join: JoinClaim | None = None
    accepts_joins: Callable[[], bool] | None = None
    protocols: ProtocolRange = SPOKEN
    schema_version: int = BASE_SCHEMA.version


def hello_of(local: LocalPeer) -> Hello:
    """The Hello this node opens every link with."""
    return Hello(local.node_id, local.public_key, local.schema_version, local.epoch,
                 local.now_ms(), local.nonce, local.name, local.protocols.low,
                 local.protocols.high)  # fmt: skip


def transcript(
    signer: NodeId, verifier: NodeId, verifier_nonce: bytes, signer_nonce: bytes
) -> bytes:
    """The bytes a node signs to prove it is ``signer`` to ``verifier`` in this session."""
    return b"".join(
        (TRANSCRIPT_LABEL, signer.encode(), verifier.encode(), verifier_nonce, signer_nonce)
    )


def refuse_hello(local: LocalPeer, hello: Hello) -> tuple[str, str] | None:
    """Why ``hello`` is refused (an error code and its message), or ``None`` to answer it.

    Checked before anything is signed: the id is the key's fingerprint, the peer is another
    node and paired (or, while this node has invitations open, may prove one; a joining node
    takes only its inviter), the two speak a common protocol version, and the wall clocks
    agree within the window. The schema versions may differ (PROTOCOL §10).
    """
    if local.fingerprint(hello.public_key) != hello.node_id:
        return "auth_failed", "the node id is not the fingerprint of the key offered"
    if hello.node_id == local.node_id:
        return "same_node", "a node cannot sync with itself"
    if local.join is not None and hello.node_id != local.join.inviter:
        return "wrong_peer", (
            f"the invitation is for {local.join.inviter}, but {hello.node_id} answered"
        )
    joins = local.accepts_joins is not None and local.accepts_joins()
    if not local.is_paired(hello.node_id) and not joins:
        return "not_paired", not_paired_text(hello.node_id, local.node_id)
    if local.protocols.common(hello.protocols) is None:
        me, them = f"{local.name} {local.node_id}", f"{printable(hello.name)} {hello.node_id}"
        return "protocol_mismatch", mismatch_text(local.protocols, hello.protocols, me, them)
    offset = hello.wall_ms - local.now_ms()
    if abs(offset) > local.max_skew_ms:
        side = "ahead of" if offset > 0 else "behind"
        return "clock_skew", (
            f"clock skew: {hello.node_id}'s wall clock is {abs(offset)} ms {side} "
            f"{local.node_id}'s (max_clock_skew_ms is {local.max_skew_ms})"
        )
    return None
