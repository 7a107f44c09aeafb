"""The handshake's pure parts: who this node is to a session, the signed transcript, and the
checks a peer's Hello must pass (docs/PROTOCOL.md §4). Kept apart from the session's flow
(sync/session.py), which runs them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .invitation import JoinClaim, not_paired_text
from .messages import Hello
from .schema import SCHEMA_VERSION
from .types import NodeId

__all__ = ["TRANSCRIPT_LABEL", "LocalPeer", "refuse_hello", "transcript"]

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
    takes only its inviter), the schema matches, and the wall clocks agree within the window.
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
    if hello.schema_version != SCHEMA_VERSION:
        return "schema_mismatch", (
            f"peer stores schema {hello.schema_version}, this node {SCHEMA_VERSION}"
        )
    offset = hello.wall_ms - local.now_ms()
    if abs(offset) > local.max_skew_ms:
        side = "ahead of" if offset > 0 else "behind"
        return "clock_skew", (
            f"clock skew: {hello.node_id}'s wall clock is {abs(offset)} ms {side} "
            f"{local.node_id}'s (max_clock_skew_ms is {local.max_skew_ms})"
        )
    return None
