"""Deliberately broken variants of the real functions, to prove the simulations bite.

Each :class:`Variant` names real attributes of ``sync``/``storage`` modules (and, for the clock
mark kept in the device's home, the simulator's stand-in for node/clock_mark.py) and the broken
function to put in their place for the length of one run (see :func:`patched`). The
simulations look storage functions up on their modules at call time, so a patched attribute is
what the nodes run. test_bites.py requires every variant to be caught within a bounded number
of examples; ``python -m simulations --bites`` reports how fast.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from feral.storage.absorb import conflicts
from feral.storage.db.connection import DatabaseError
from feral.storage.link import handler as link
from feral.storage.log import delta_log, erase, integrity, prune, snapshot
from feral.storage.memory import local_commit, memories
from feral.storage.store import roll_back
from feral.sync import merge
from feral.sync.conflicts import Fork, LoggedWrite
from feral.sync.delta import Delta, Page, Version
from feral.sync.errors import FeralError, ProtocolError
from feral.sync.hlc import COUNTER_BITS, check_skew
from feral.sync.messages import CaughtUp
from feral.sync.schema import table_by_code
from feral.sync.session import PageReceived, PeerCaughtUp, State, SyncSession
from feral.sync.types import VersionVector

from . import simnode

__all__ = ["VARIANTS", "Variant", "patched"]

Conn = Any


@dataclass(frozen=True)
class Variant:
    """A bug, written as replacements for real module attributes."""

    name: str
    machine: str
    """Which machine must catch it: ``convergence``, ``agreement`` or ``repair``."""
    patches: tuple[tuple[object, str, object], ...]


@contextmanager
def patched(variant: Variant) -> Iterator[None]:
    """Swap the variant's attributes in, and always back out."""
    saved = [(target, name, getattr(target, name)) for target, name, _ in variant.patches]
    try:
        for target, name, value in variant.patches:
            setattr(target, name, value)
        yield
    finally:
        for target, name, value in reversed(saved):
            setattr(target, name, value)


def _wins_by_hlc_only(incoming: Version, current: Version | None) -> bool:
    return current is None or incoming.hlc > current.hlc


def _upsert_by_hlc_only() -> dict[str, str]:
    guard = re.compile(
        r"WHERE \(excluded\.deleted, excluded\.hlc, excluded\.origin\) > "
        r"\((\S+)\.deleted, \S+\.hlc, \S+\.origin\)"
    )
    return {name: guard.sub(r"WHERE excluded.hlc > \1.hlc", sql)
            for name, sql in delta_log._UPSERT.items()}  # fmt: skip


def _gap(page: Page, held: int) -> ProtocolError:
    return ProtocolError(f"page continues from {page.after}, only {held} held")


def _vector_before_commit(conn: Conn, page: Page, *, now_ms: int, max_skew_ms: int,
                          peer: str | None = None, checked: bool = False,
                          repair: bool = False, collided: list[Delta] | None = None,
                          ) -> int:  # fmt: skip
    """The vector moves over the page in its own transaction, before the rows are written."""
    if not checked:
        page.check()
    held = delta_log.version_vector(conn).get(page.origin, 0)
    conn.execute(
        "INSERT INTO version_vector(origin, hlc) VALUES (?, ?) "
        "ON CONFLICT(origin) DO UPDATE SET hlc = max(hlc, excluded.hlc)",
        (page.origin, page.last_hlc),
    )
    conn.execute("COMMIT")  # the vector's own transaction
    conn.execute("BEGIN IMMEDIATE")  # the rows' transaction, where it was
    for delta in page.deltas:
        check_skew(delta.hlc, now_ms, max_skew_ms, peer)
    if page.after > held:
        raise _gap(page, held)
    fresh = [d for d in page.deltas if repair or d.hlc > held]
    delta_log.apply_deltas(conn, fresh)
    return len(fresh)


def _clock_before_skew_check(conn: Conn, page: Page, *, now_ms: int, max_skew_ms: int,
                             peer: str | None = None, checked: bool = False,
                             repair: bool = False, collided: list[Delta] | None = None,
                             ) -> int:  # fmt: skip
    """The stamps are taken into the clock (the high-water mark) first, then checked against
    the clock they just moved: the check can no longer fail."""
    if not checked:
        page.check()
    held = delta_log.version_vector(conn).get(page.origin, 0)
    if page.after > held:
        raise _gap(page, held)
    fresh = [d for d in page.deltas if repair or d.hlc > held]
    delta_log.apply_deltas(conn, fresh)
    clock = max(now_ms, delta_log.clock_high_water(conn) >> COUNTER_BITS)
    for delta in page.deltas:
        check_skew(delta.hlc, clock, max_skew_ms, peer)
    return len(fresh)


def _one_window_check(remote: int, now_ms: int, window_ms: int, peer: str | None = None,
                      origin: str | None = None) -> None:  # fmt: skip
    """Received stamps refused beyond one window (the rule before issue 11)."""
    check_skew(remote, now_ms, window_ms // 2, peer, origin)


def _single_cursor(
    conn: Conn, since: VersionVector, limit: int, ceiling: int | None = None
) -> tuple[list[Page], Any]:
    """FERAL's relay bug: one "since this HLC" cursor for every origin."""
    cursor = max(since.values(), default=0)
    mine = delta_log.version_vector(conn)
    return delta_log.changes_since(conn, {o: cursor for o in mine}, limit, ceiling), mine


def _nuke_without_tombstone(conn: Conn, origin: str, stamp: Callable[[int], int],
                            row_id: str) -> dict[str, Any]:  # fmt: skip
    """The tombstone is dropped at once: the row is deleted here and nothing replicates."""
    table, row = memories.find_row(conn, row_id)
    conn.execute(f'DELETE FROM "{table.name}" WHERE id = ?', (row_id,))
    return row


def _quiet_on_arrival(self: SyncSession) -> bool:
    """Quiet once each side has said CaughtUp, whatever each said: the round ends before the
    peer has compared our counts, so a hole on either side goes unrepaired (issue 11)."""
    done = self._round
    return (
        self.state is State.OPEN
        and done.said
        and done.heard
        and not self._in_flight
        and not done.requested
    )


def _caught_up_never_said_again(self: SyncSession, message: CaughtUp) -> None:
    """The peer's CaughtUp is noted, but ours is not said again after applying its pages."""
    self._round.heard = True
    self._heard = message
    self._events.append(PeerCaughtUp(dict(message.vector), dict(message.entries), message.digest))


def _anti_entropy_always(self: link.LinkHandler, conn: Conn) -> None:
    """Anti-entropy re-sends the vector even while a repair streams (issue 11)."""
    self.session.send_vector(delta_log.version_vector(conn))


def _page_acked_after_a_failed_write(
    self: link.LinkHandler, conn: Conn, event: PageReceived
) -> link.Handled:
    """A write that fails while the page is applied is swallowed: the page's rows are rolled
    back, and the page is acked as if applied (the link goes on)."""
    page = event.page
    applied = 0
    try:
        applied = delta_log.apply_page(
            conn, page, now_ms=self.session.local.now_ms(), max_skew_ms=self.max_skew_ms(),
            peer=self.result.peer, checked=True, repair=self.holes.page(page.origin, page.after),
        )  # fmt: skip
    except DatabaseError:
        roll_back(conn)  # the page's rows are gone, and yet it is acked below
    except FeralError as exc:
        roll_back(conn)
        return link.Handled(refused=self._refuse_page(exc))
    self.session.ack(page)
    return link.Handled(committed=True, applied=applied)


_APPLY_PAGE = delta_log.apply_page


def _apply_page_without_erasing(conn: Conn, page: Page, **options: Any) -> int:
    """A tombstone from a peer is applied without erasing: only the device that nuked erases,
    and every other keeps the words in its log, for a device that joins later."""
    erase_outdated = getattr(delta_log, "erase_outdated")  # noqa: B009 - imported, not exported
    setattr(delta_log, "erase_outdated", lambda conn, deltas: deltas)  # noqa: B010
    try:
        return _APPLY_PAGE(conn, page, **options)
    finally:
        setattr(delta_log, "erase_outdated", erase_outdated)  # noqa: B010


_LOGGED_MARKS = erase._logged_marks  # noqa: SLF001 - the variant replaces it
_ERASE_BELOW = erase._erase_below  # noqa: SLF001


def _marks_of_dead_rows(conn: Conn, deltas: Sequence[Delta], codes: set[int]) -> dict[Any, Any]:
    """The rule before issue 11's last fix: only a row whose state is a tombstone erases what
    arrives older than it; once a later write made it live again, older writes keep their words."""
    marks = _LOGGED_MARKS(conn, deltas, codes)
    return {key: mark for key, mark in marks.items() if _row_dead_at(conn, key, mark)}


def _erase_below_dead_rows(conn: Conn, deltas: Sequence[Delta], raised: dict[Any, Any]) -> None:
    """... and a tombstone that arrives after a newer write of its row erases nothing."""
    kept = {key: mark for key, mark in raised.items() if not _row_live_above(conn, key, mark)}
    _ERASE_BELOW(conn, deltas, kept)


def _row_state(conn: Conn, key: tuple[int, str]) -> tuple[tuple[int, str], bool] | None:
    name = table_by_code(key[0]).name
    row = conn.execute(
        f'SELECT hlc, origin, deleted FROM "{name}" WHERE id = ?', (key[1],)
    ).fetchone()
    return None if row is None else ((int(row[0]), str(row[1])), bool(row[2]))


def _row_dead_at(conn: Conn, key: tuple[int, str], mark: tuple[int, str]) -> bool:
    state = _row_state(conn, key)
    return state is not None and state[1] and state[0] >= mark


def _row_live_above(conn: Conn, key: tuple[int, str], mark: tuple[int, str]) -> bool:
    state = _row_state(conn, key)
    return state is not None and not state[1] and state[0] > mark


_DELTA_FROM_LOG = delta_log._delta_from_log


def _delta_without_prior(*entry: Any) -> Delta:
    """The log's entry as sent, without the version it replaced: every relayed write then
    looks like a row's first write."""
    delta = _DELTA_FROM_LOG(*entry)
    return Delta(delta.table, delta.row_id, delta.hlc, delta.origin, delta.values, None)


def _forks_of_writes_not_in_line(writes: Iterable[LoggedWrite], **_: object) -> list[Fork]:
    """The tempting rule: two writes of a row conflict unless one replaced the other. A chain
    of three (A, then B over A, then C over B) reports A and C."""
    unique = sorted({w.version: w for w in writes if w.values is not None}.values(),
                    key=lambda w: w.version)  # fmt: skip
    return [
        Fork(a.prior, a, b)
        for i, a in enumerate(unique)
        for b in unique[i + 1 :]
        if b.prior != a.version and a.prior != b.version and a.values != b.values
    ]


_real_peer_holds = prune._peer_holds
_real_snapshot_pages = snapshot.snapshot_pages


def _no_peer_holds_back(conn: Conn, paired: Any, now_ms: int, window_ms: int) -> Any:
    """Every entry older than the window goes, acknowledged or not."""
    holds, _ = _real_peer_holds(conn, paired, now_ms, window_ms)
    return holds, []


def _snapshot_without_tombstones(conn: Conn, cursor: Any, limit: int) -> Any:
    """A snapshot of the live rows only: the tombstones are left out of its pages."""
    pages = _real_snapshot_pages(conn, cursor, limit)
    return [replace(p, rows=tuple(r for r in p.rows if r.values is not None)) for p in pages]


def _later_write_beats_a_tombstone() -> dict[str, str]:
    """The upsert before issue 23: plain last-write-wins, a tombstone no stronger than a write."""
    guard = re.compile(
        r"\(excluded\.deleted, (excluded\.hlc, excluded\.origin)\) > \((\S+)\.deleted, "
    )
    return {name: guard.sub(r"(\1) > (", sql) for name, sql in delta_log._UPSERT.items()}  # noqa: SLF001


VARIANTS = (
    Variant(
        "tie_break_ignores_node_id",
        "convergence",
        ((merge, "wins", _wins_by_hlc_only), (delta_log, "_UPSERT", _upsert_by_hlc_only())),
    ),
    Variant("tie_break_sql_only", "agreement", ((delta_log, "_UPSERT", _upsert_by_hlc_only()),)),
    Variant(
        "vector_before_commit", "convergence", ((delta_log, "apply_page", _vector_before_commit),)
    ),  # fmt: skip
    Variant(
        "relay_single_cursor", "convergence", ((delta_log, "answer_request", _single_cursor),)
    ),  # fmt: skip
    Variant("tombstone_dropped", "convergence", ((memories, "nuke", _nuke_without_tombstone),)),
    Variant(
        "nuke_keeps_words",
        "convergence",
        ((delta_log, "erase_outdated", lambda conn, deltas: deltas),),
    ),  # fmt: skip
    Variant(
        "clock_before_skew_check",
        "convergence",
        ((delta_log, "apply_page", _clock_before_skew_check),),
    ),  # fmt: skip
    Variant(
        "collisions_ignored",
        "convergence",
        ((integrity, "find_collisions", lambda conn, origin, deltas: []),),
    ),
    Variant(
        "high_water_not_kept",
        "convergence",
        (
            (local_commit, "own_high_water", lambda conn, origin: 0),
            (simnode, "read_mark", lambda node: 0),
        ),
    ),  # fmt: skip
    Variant(
        # The old clock (issue 11, finding 5): every local stamp lifted to the newest stamp held
        # from any origin, and received stamps refused beyond one window instead of two.
        "clock_lifted_by_received_stamps",
        "skew",
        (
            (local_commit, "own_high_water", lambda conn, origin: delta_log.clock_high_water(conn)),
            (delta_log, "check_skew", _one_window_check),
        ),
    ),  # fmt: skip
    Variant(
        "round_ends_before_the_hole_check",
        "repair",
        (
            (SyncSession, "quiet", property(_quiet_on_arrival)),
            (SyncSession, "_receive_caught_up", _caught_up_never_said_again),
        ),
    ),
    Variant(
        "anti_entropy_cancels_a_repair",
        "repair",
        ((link.LinkHandler, "anti_entropy", _anti_entropy_always),),
    ),
    Variant(
        "storage_error_swallowed_and_acked",
        "convergence",
        ((link.LinkHandler, "_apply", _page_acked_after_a_failed_write),),
    ),
    Variant(
        "nuke_erases_only_where_it_was_made",
        "convergence",
        ((delta_log, "apply_page", _apply_page_without_erasing),),
    ),
    Variant(
        "nuke_erases_only_while_the_row_is_dead",
        "convergence",
        (
            (erase, "_logged_marks", _marks_of_dead_rows),
            (erase, "_erase_below", _erase_below_dead_rows),
        ),
    ),
    Variant(
        "conflicts_prior_dropped_on_relay",
        "convergence",
        ((delta_log, "_delta_from_log", _delta_without_prior),),
    ),
    Variant(
        "conflicts_never_recorded",
        "convergence",
        ((conflicts, "forks", lambda writes, **_: []),),
    ),
    Variant(
        "conflicts_reported_on_sequential_overwrite",
        "convergence",
        ((conflicts, "forks", _forks_of_writes_not_in_line),),
    ),
    Variant(
        "wal_keeps_nuked_words",
        "convergence",
        ((erase, "checkpoint_wal", lambda conn: True),),
    ),
    Variant(
        "prune_before_every_peer_acked",
        "convergence",
        ((prune, "_peer_holds", _no_peer_holds_back),),
    ),
    Variant(
        # Issue 23, #3: an archive made where the nuke was not yet known, stamped after it,
        # brought the row back.
        "nuke_loses_to_a_later_write",
        "convergence",
        (
            (delta_log, "_UPSERT", _later_write_beats_a_tombstone()),
            (delta_log, "tombstones_overtaken", lambda conn, deltas: []),
            (erase, "_dead_rows", lambda conn, deltas: set()),
        ),
    ),
    Variant(
        "snapshot_drops_tombstones",
        "convergence",
        ((snapshot, "snapshot_pages", _snapshot_without_tombstones),),
    ),
)
