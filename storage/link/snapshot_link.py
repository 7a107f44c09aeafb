"""What a link does with the snapshot's events (sync/snapshot.py), beside storage/link/handler.py.

Kept apart from :class:`~feral.storage.link.handler.LinkHandler` so the snapshot's answers are in
one place: the handler calls :func:`answer_snapshot` before it answers a request from the log, and
:func:`handle_snapshot_event` for the events only a snapshot raises.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feral.storage.db.connection import Connection, DatabaseError
from feral.storage.log import snapshot
from feral.storage.store import roll_back
from feral.sync.errors import ClockSkewError, FeralError
from feral.sync.events import DeltasRequested
from feral.sync.session import CLOSE_INTERNAL
from feral.sync.snapshot import (
    SnapshotAcked,
    SnapshotReceived,
    SnapshotRequested,
    SnapshotSession,
)

from . import peers as peer_status

if TYPE_CHECKING:
    from .handler import Handled, LinkHandler

__all__ = ["SNAPSHOT_EVENTS", "answer_snapshot", "handle_snapshot_event"]

SNAPSHOT_EVENTS = (SnapshotRequested, SnapshotReceived, SnapshotAcked)


def answer_snapshot(link: LinkHandler, conn: Connection, event: DeltasRequested) -> bool:
    """Start a snapshot if the log cannot serve the peer's request, or the peer, whose rows
    differ from ours at equal holdings, asks for everything; returns whether it did.

    Rows may differ at equal holdings where one side holds rows no log holds: those of a
    snapshot whose final page never came (its sender went away, or was restored from an older
    copy, so no device's log holds those writes any more). Replaying the log cannot carry
    them; a snapshot carries every row, and merges without dropping any on either side, so the
    two sides' snapshots to each other leave both with the same rows (docs/REPLICATION.md §5,
    "Divergence"). A limit of 0 asks only for a fresh CaughtUp, which the log answers as ever.
    """
    session = link.session
    if not isinstance(session, SnapshotSession) or event.limit == 0:
        return False
    mend = _asks_for_everything(link, event)
    if not mend and not snapshot.needs_snapshot(conn, event.since, link.snapshot_above):
        return False
    cursor = snapshot.start_snapshot(conn)
    if event.announce:
        session.send_pending(snapshot.snapshot_rows(conn))
    why = "rows differ at equal holdings" if mend else "the log cannot serve it"
    link.log.info("link with %s: sending a snapshot (%s)", link.result.peer, why)
    session.send_snapshot(snapshot.snapshot_pages(conn, cursor, event.limit))
    return True


def _asks_for_everything(link: LinkHandler, event: DeltasRequested) -> bool:
    """Whether the peer's new Vector names nothing although it told us on this link that it
    holds something: it found our rows differ from its own at equal holdings and asks for
    everything (storage/link/handler.py). A peer whose first Vector on a link names nothing (a
    new or wiped device) is answered by the usual rule."""
    return not event.since and event.announce and link.peer_held_something


def handle_snapshot_event(link: LinkHandler, conn: Connection, event: object) -> Handled:
    """Answer one of :data:`SNAPSHOT_EVENTS`."""
    from .handler import Handled

    session = link.session
    assert isinstance(session, SnapshotSession)
    if isinstance(event, SnapshotRequested):
        try:
            pages = snapshot.snapshot_pages(conn, event.cursor, event.limit)
        except (FeralError, DatabaseError) as exc:
            session.fail("storage_error", f"read failed: {exc}", CLOSE_INTERNAL)
            return Handled()
        session.send_snapshot(pages)
    elif isinstance(event, SnapshotReceived):
        return _apply(link, session, conn, event)
    elif isinstance(event, SnapshotAcked):
        link.result.sent += event.rows
    return Handled()


def _apply(
    link: LinkHandler, session: SnapshotSession, conn: Connection, event: SnapshotReceived
) -> Handled:
    from .handler import Handled

    peer = link.result.peer
    try:
        rows = snapshot.apply_snapshot_page(conn, event.page, now_ms=session.local.now_ms(),
                                            max_skew_ms=link.max_skew_ms(), peer=peer)  # fmt: skip
    except (ClockSkewError, FeralError, DatabaseError) as exc:
        roll_back(conn)
        return Handled(refused=link._refuse_page(exc))
    session.ack_snapshot(event.page)
    link.result.received += rows
    link.result.by_snapshot = True
    progress = None
    if peer is not None:
        if rows:
            peer_status.record_transfer(conn, peer, received=rows)
        progress = peer_status.record_incoming(conn, peer, rows)
    # The final page moves the vector even when it holds no row: the other links must hear of it.
    applied = rows or int(event.page.final)
    return Handled(committed=True, applied=applied, progress=progress)
