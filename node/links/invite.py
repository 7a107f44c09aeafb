"""Pairing in one step: making an invitation, answering a join, and joining (sync/invitation.py).

The inviter (``feral sync invite``) keeps the invitation's key in its database; its running
``feral serve`` reads it there when a joiner proves it, marks it used and pairs the joiner
(accept-only: the joiner dials in) in settings.json, all before the link opens. The joiner
(``feral sync join``) dials the invitation's URL as it would a paired peer, expecting the
inviter's id (with TLS that id pins the certificate before any frame), proves the secret inside
that link, runs a first sync round, and pairs the inviter with its URL.
"""

from __future__ import annotations

import logging
import secrets
import weakref
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from feral.node.node_kernel import NodeKernel
from feral.node.settings.config import (
    PeerSettings,
    Settings,
    load_settings,
    save_settings,
    with_peer,
)
from feral.storage.link import invitations
from feral.sync.errors import ConfigError
from feral.sync.events import Failed, JoinOffered
from feral.sync.invitation import (
    REFUSED,
    SECRET_BYTES,
    Invitation,
    JoinClaim,
    JoinLimiter,
    invitation_seed,
)
from feral.sync.session import CLOSE_POLICY, SyncSession
from feral.sync.text import printable

__all__ = [
    "RATE_LIMITED",
    "MadeInvitation",
    "answer_join",
    "claim_for",
    "is_join_refusal",
    "join_refused",
    "joins_expected",
    "make_invitation",
    "pair_inviter",
]

log = logging.getLogger("feral.peer")

RATE_LIMITED = "join_rate_limited"
"""The error code of a join refused because too many joins failed just before it."""

_LIMITERS: weakref.WeakKeyDictionary[NodeKernel, JoinLimiter] = weakref.WeakKeyDictionary()
"""One limiter per node in this process: the server's count of failed joins."""


def _limiter(node: NodeKernel) -> JoinLimiter:
    return _LIMITERS.setdefault(node, JoinLimiter())


def _keys(secret: bytes) -> tuple[Ed25519PrivateKey, bytes]:
    private = Ed25519PrivateKey.from_private_bytes(invitation_seed(secret))
    return private, private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


@dataclass(frozen=True)
class MadeInvitation:
    """A new invitation and what to show about it."""

    invitation: Invitation
    label: str
    expires_ms: int


async def make_invitation(
    node: NodeKernel, url: str, label: str, lifetime_ms: int
) -> MadeInvitation:
    """Draw a secret, keep its invitation key (never the secret) and return the invitation."""
    secret = secrets.token_bytes(SECRET_BYTES)
    _, key = _keys(secret)
    now = node.now_ms()
    expires = now + lifetime_ms
    await node.store.write(
        invitations.add_invitation, key, label=label, url=url, now_ms=now, expires_ms=expires
    )
    return MadeInvitation(Invitation(url, node.node_id, secret), label, expires)


def claim_for(invitation: Invitation) -> JoinClaim:
    """The joiner's side of ``invitation``: whom to expect and how to prove the secret."""
    private, key = _keys(invitation.secret)
    return JoinClaim(invitation.inviter, key, private.sign)


async def answer_join(node: NodeKernel, session: SyncSession, event: JoinOffered) -> None:
    """Judge a proven join: open invitation, used now, joiner paired, link opened; or refused.

    The invitation is marked used in the transaction that finds it open, so it pairs one
    joiner only. Each refusal counts in the rate limit; while it is exceeded every join is
    refused before the database is asked.
    """
    now = node.now_ms()
    limited = _limiter(node).refusal(now)
    if limited is not None:
        session.fail(RATE_LIMITED, limited, CLOSE_POLICY)
        return
    record, refusal = await node.store.write(
        invitations.use_invitation, event.invitation_key, event.peer, now
    )
    if refusal is not None:
        session.fail(REFUSED, refusal, CLOSE_POLICY)
        return
    try:
        node.settings = _paired(node, PeerSettings(event.peer, None))
    except ConfigError as exc:
        session.fail(REFUSED, f"this node could not pair the joiner: {exc}", CLOSE_POLICY)
        return
    label = f" {printable(record.label)!r}" if record and record.label else ""
    log.info("= %s (%s) joined by invitation%s: paired (accept only; it dials here)",
             event.peer, event.name, label)  # fmt: skip
    session.accept_join()


def _paired(node: NodeKernel, peer: PeerSettings) -> Settings:
    """Add ``peer`` to settings.json as it is on disk now (another process may have changed
    it), and return the settings this node runs with from now on."""
    settings = with_peer(load_settings(node.home), peer)
    save_settings(node.home, settings)
    return settings


async def joins_expected(node: NodeKernel) -> bool:
    """Whether an unpaired peer may be joining: this node made an invitation recently."""
    return await node.store.read(invitations.recent_invitations, node.now_ms())


def is_join_refusal(event: Failed) -> bool:
    """Whether this node refused a join (its log line and rate limit are this module's)."""
    return not event.remote and event.code in (REFUSED, RATE_LIMITED)


def join_refused(node: NodeKernel, session: SyncSession, event: Failed) -> None:
    """Say once in the serve log what join was refused and why (never the secret), and count
    it against the rate limit (a refusal for the limit itself is not counted again)."""
    hello = session.offered
    who = f"{hello.node_id} ({printable(hello.name)})" if hello else "an unidentified peer"
    log.warning("! refused a join by %s: %s", who, event.message)
    if event.code == REFUSED:
        _limiter(node).failed(node.now_ms())


def pair_inviter(node: NodeKernel, invitation: Invitation) -> None:
    """The joiner's half: pair the inviter with its URL, so this node dials it from now on."""
    node.settings = _paired(node, PeerSettings(invitation.inviter, invitation.url))
