"""Invitations this node made (``feral sync invite``), local-only and never replicated.

Each row keeps the invitation's key (the public half of the key derived from its secret, see
sync/invitation.py), never the secret: the key checks a joiner's proof but cannot make one, so a
copy of the database does not let anyone join. ``feral serve`` reads the same file, so an
invitation made by the CLI is open to the running server at once; using one marks it in the
same transaction that finds it open, so it is used once, even by two joiners at the same time.
"""

from __future__ import annotations

from feral.storage.db.connection import Connection
from feral.sync.invitation import InvitationRecord, judge_invitation
from feral.sync.types import NodeId

__all__ = [
    "RECENT_MS",
    "add_invitation",
    "find_invitation",
    "recent_invitations",
    "use_invitation",
]

RECENT_MS = 86_400_000
"""How long after it expires an invitation still gets its own refusal ("expired", "used"):
while any is that recent, an unpaired peer is asked for a Join instead of refused at once."""


def add_invitation(
    conn: Connection, key: bytes, *, label: str, url: str, now_ms: int, expires_ms: int
) -> None:
    """Keep a new invitation, open until ``expires_ms``."""
    conn.execute(
        "INSERT INTO invitations(invitation_key, label, url, created_at, expires_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (key, label, url, now_ms, expires_ms),
    )


def find_invitation(conn: Connection, key: bytes) -> InvitationRecord | None:
    """The invitation with ``key``, open or not, or ``None``."""
    row = conn.execute(
        "SELECT label, expires_at, used_at, used_by FROM invitations WHERE invitation_key = ?",
        (key,),
    ).fetchone()
    if row is None:
        return None
    label, expires, used_at, used_by = row
    joiner = None if used_by is None else NodeId(used_by)
    return InvitationRecord(str(label), int(expires), used_at, joiner)


def use_invitation(
    conn: Connection, key: bytes, joiner: NodeId, now_ms: int
) -> tuple[InvitationRecord | None, str | None]:
    """Judge the invitation with ``key`` for ``joiner`` and, when it is open, mark it used.

    Returns:
        The invitation as it was found, and why it was refused (``None``: it was open and is
        now used by ``joiner``). Run inside a write transaction.
    """
    record = find_invitation(conn, key)
    refusal = judge_invitation(record, now_ms)
    if refusal is None:
        conn.execute(
            "UPDATE invitations SET used_at = ?, used_by = ? WHERE invitation_key = ?",
            (now_ms, joiner, key),
        )
    return record, refusal


def recent_invitations(conn: Connection, now_ms: int) -> bool:
    """Whether any invitation is open, or expired less than :data:`RECENT_MS` ago."""
    row = conn.execute(
        "SELECT 1 FROM invitations WHERE expires_at > ? LIMIT 1", (now_ms - RECENT_MS,)
    ).fetchone()
    return row is not None
