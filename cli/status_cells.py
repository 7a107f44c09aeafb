"""One peer's row of ``feral sync status`` for people: the link, the backlogs, and whether the
two are in sync said as the node judged it (node/links/sync_state.py; docs/OPERATIONS.md, "What sync
status says", has the table of states). ``--json`` carries the same facts as numbers and names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from feral.sync.text import printable

from .output import ago, count, duration, short_id, shorten

__all__ = ["STATUS_HEADERS", "status_cells", "sync_state_cell"]

STATUS_HEADERS = ("peer", "url", "link", "last sync", "hlc lag", "to send", "to receive",
                  "in sync", "transport", "last error")  # fmt: skip


def status_cells(p: Mapping[str, Any], now: int) -> tuple[str, ...]:
    """One peer's row for people: short id, durations and counts in their units."""
    if p["link_up"]:
        link = f"up now ({duration(now - p['link_up_since'])})"
    else:
        link = "never up" if p["last_seen_at"] is None else f"last up {ago(p['last_seen_at'], now)}"
    error = "-"
    if p["last_error"]:
        error = f"{ago(p['last_error_at'], now)}: {printable(p['last_error'])}"
    receive = p["backlog_to_receive"]
    return (
        short_id(p["node_id"]), p["url"] or "(accept only)", link, ago(p["last_sync_at"], now),
        "unknown" if p["hlc_lag_ms"] is None else duration(p["hlc_lag_ms"]),
        count(p["backlog_to_send"]), "unknown" if receive is None else count(receive),
        sync_state_cell(p, now), _transport(p), shorten(error, 60),
    )  # fmt: skip


def _transport(p: Mapping[str, Any]) -> str:
    """Encrypted or not, and the certificate's fingerprint (its first bytes) if it is."""
    if not p["encrypted"]:
        return "ws (unencrypted)"
    return f"wss cert {p['certificate'][:23]}" if p["certificate"] else "wss"


def _pending(p: Mapping[str, Any]) -> str:
    """``3 to send, 5 to receive``: the backlogs known, the empty ones left out."""
    send, receive = p["backlog_to_send"], p["backlog_to_receive"]
    parts = [f"{count(send)} to send"] if send else []
    parts += [f"{count(receive)} to receive"] if receive else []
    return ", ".join(parts)


def _unsent(p: Mapping[str, Any]) -> str:
    return f": {count(p['backlog_to_send'])} unsent" if p["backlog_to_send"] else ""


def sync_state_cell(p: Mapping[str, Any], now: int) -> str:
    """The ``in sync`` cell: ``yes``, ``no: 3 to send``, ``unknown since 2 min ago (equal
    then)``, ``unreachable since 5 min ago: 3 unsent``, ``never exchanged`` ..."""
    state = p["sync_state"]
    if state == "diverged":
        return "DIVERGED"
    if state == "catching_up":
        done = p["catch_up"]
        return (f"catching up {done['percent']}% "
                f"({count(done['received'])} of {count(done['total'])})")  # fmt: skip
    if state == "in_sync":
        return "yes"
    if state == "not_in_sync":
        pending = _pending(p)
        return f"no: {pending}" if pending else "no"
    if state == "unknown":
        then = "equal then" if p["last_known_equal"] else _pending(p) or "not equal then"
        return f"unknown since {ago(p['last_sync_at'], now)} ({then})"
    if state == "unreachable":
        since = p["last_seen_at"]
        when = ", never reached" if since is None else f" since {ago(since, now)}"
        return f"unreachable{when}{_unsent(p)}"
    return f"never exchanged{_unsent(p)}"
