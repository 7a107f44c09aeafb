"""What ``feral serve`` logs about its links: failures once per streak, catch-up progress.

A link fails the same way on every retry while the cause lasts (a lock, a full disk), and a
catch-up of 100,000 entries comes in 100 pages: the log says each thing once, or in steps.
"""

from __future__ import annotations

import logging

__all__ = ["FailureLog", "ProgressLog"]

log = logging.getLogger("feral.peer")


class FailureLog:
    """The serve log's account of failing links: one line per failure, not one per retry.

    A lock held by a long import (or a full disk) fails every reconnect the same way until it
    is gone; the log says so once, and again only when the failure changes or after the link
    with that peer came up again in between.
    """

    def __init__(self) -> None:
        self._last: dict[str, str] = {}

    def failed(self, who: str, message: str) -> None:
        """The link with ``who`` (a node id, or what else names it) failed with ``message``."""
        if self._last.get(who) != message:
            self._last[who] = message
            log.warning("! link with %s failed: %s (the link will be retried)", who, message)

    def crashed(self, who: str, exc: Exception) -> None:
        """An unexpected error (a defect) ended the link: its traceback, once per streak."""
        message = f"{type(exc).__name__}: {exc}"
        if self._last.get(who) != message:
            self._last[who] = message
            log.error("! link with %s crashed (the link will be retried)", who, exc_info=exc)

    def recovered(self, who: str) -> None:
        """A link with ``who`` authenticated and recorded it: the next failure is news."""
        if self._last.pop(who, None) is not None:
            log.info("= link with %s is up again", who)


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
