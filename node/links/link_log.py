"""What a link tells its caller and ``feral serve``'s log: a catch-up's progress in steps,
divergence once, holes, integrity alarms and refusals (failures, once per streak, are logged by
:class:`feral.storage.link.failure_log.FailureLog`, which the simulated devices share).

A link fails the same way on every retry while the cause lasts (a lock, a full disk), and a
catch-up of 100,000 entries comes in 100 pages: the log says each thing once, or in steps.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from feral.storage.link.handler import Handled
from feral.sync.messages import Hello
from feral.sync.session import Event, Failed, PageReceived, PeerCaughtUp, PeerPending
from feral.sync.text import printable
from feral.sync.types import NodeId

__all__ = ["LinkReport", "ProgressLog", "peer_label"]

log = logging.getLogger("feral.peer")


def peer_label(
    peer: NodeId | None, name: str | None, hello: Hello | None, where: str | None
) -> str:
    """A peer as the serve log names it: its id and name once authenticated, else what its
    Hello claimed, and ``where`` (the address it came from, or the URL dialled); all of it
    escaped, since a peer chose it."""
    if peer is not None and name is not None:
        label = f"{peer} ({name})"
    elif hello is not None:
        label = f"{printable(str(hello.node_id))} ({printable(hello.name)})"
    else:
        label = "an unidentified peer"
    if where is None:
        return label
    return f"{label} {'from' if '://' not in where else 'at'} {where}"


class ProgressLog:
    """A catch-up's progress, logged at each tenth of the rows announced, the end included."""

    def __init__(self) -> None:
        self._step: dict[str, int] = {}

    def started(self, who: str) -> None:
        """``who`` announced a new stream: its progress counts from nothing again."""
        self._step.pop(who, None)

    def advanced(self, who: str, received: int, total: int) -> None:
        """``received`` of the ``total`` entries ``who`` announced have been applied."""
        if total <= 0:
            return
        step = min(received * 10 // total, 10)
        if step <= self._step.get(who, 0):
            return
        log.info("= catching up from %s: %s of %s rows (%d%%)", who, f"{received:,}",
                 f"{total:,}", received * 100 // total)  # fmt: skip
        self._step[who] = step


class LinkReport:
    """What one link (node/links/peer.py) reports after each event its handler answered.

    Args:
        progress: called after each page applied with the catch-up's ``(received, total)``.
        serve_log: log the catch-up's progress too (a serve link; a CLI round reports its
            result instead).
    """

    def __init__(self, progress: Callable[[int, int], None] | None, *, serve_log: bool) -> None:
        self.progress = progress
        self._progress_log = ProgressLog() if serve_log else None
        self._diverged = False

    def failed(self, event: Failed, named: str) -> None:
        """The link was refused, by either side (``named``: the peer as the log names it)."""
        where = "peer refused" if event.remote else "refused peer"
        log.warning("! %s %s: %s: %s", where, named, event.code,
                    printable(event.message))  # fmt: skip

    def handled(self, peer: NodeId | None, event: Event, handled: Handled) -> None:
        """Progress to the caller and the serve log; divergence to the log, once per link;
        holes asked again and integrity alarms."""
        self._progress(peer or "?", event, handled)
        if handled.holes:
            log.warning("! log hole for %s: asking %s again", sorted(handled.holes), peer)
        if handled.collisions and isinstance(event, PageReceived):
            log.warning(
                "! integrity alarm: %s sent %d entries of %s at stamps this node holds with "
                "other content; kept ours (see feral sync status)",
                peer, handled.collisions, event.page.origin,
            )  # fmt: skip

    def _progress(self, who: str, event: Event, handled: Handled) -> None:
        if isinstance(event, PeerPending) and event.entries and self._progress_log is not None:
            self._progress_log.started(who)  # (an announcement of nothing keeps the last one)
        if handled.progress is not None:
            if self.progress is not None:
                self.progress(*handled.progress)
            if self._progress_log is not None:
                self._progress_log.advanced(who, *handled.progress)
        if isinstance(event, PeerCaughtUp) and handled.diverged != self._diverged:
            self._diverged = handled.diverged
            if self._diverged:
                log.warning(
                    "! diverged from %s: equal vectors and entry counts, other rows (row "
                    "digests differ); see feral sync status", who,
                )  # fmt: skip
