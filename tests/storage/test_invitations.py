"""storage/link/invitations.py: an invitation is kept by its key, used once, and refused after."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from feral.storage.db.connection import Connection, connect
from feral.storage.db.migrations import apply_migrations
from feral.storage.link.invitations import add_invitation, recent_invitations, use_invitation
from feral.sync.types import NodeId

KEY = bytes(range(32))
JOINER = NodeId("a" * 32)
OTHER = NodeId("b" * 32)


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[Connection]:
    connection = connect(tmp_path / "feral.db")
    apply_migrations(connection)
    add_invitation(connection, KEY, label="phone", url="ws://h:1", now_ms=1_000, expires_ms=61_000)
    yield connection
    connection.close()


def test_an_open_invitation_is_used_once_by_the_first_joiner(conn: Connection):
    record, refusal = use_invitation(conn, KEY, JOINER, 2_000)
    assert refusal is None and record is not None and record.used_ms is None

    _, refusal = use_invitation(conn, KEY, OTHER, 3_000)
    assert refusal is not None and f"already used by {JOINER}" in refusal
    row = conn.execute("SELECT used_at, used_by FROM invitations").fetchone()
    assert tuple(row) == (2_000, JOINER)  # the refused second joiner changed nothing


def test_an_unknown_or_expired_invitation_is_refused_and_stays_unused(conn: Connection):
    _, refusal = use_invitation(conn, bytes(32), JOINER, 2_000)
    assert refusal is not None and "no invitation here matches" in refusal
    _, refusal = use_invitation(conn, KEY, JOINER, 61_000)
    assert refusal is not None and "expired 0 s ago" in refusal
    assert conn.execute("SELECT used_at FROM invitations").fetchone()[0] is None


def test_joins_are_expected_until_a_day_after_the_last_invitation_expired(conn: Connection):
    assert recent_invitations(conn, 61_000 + 86_400_000 - 1)
    assert not recent_invitations(conn, 61_000 + 86_400_000)
