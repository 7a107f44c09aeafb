"""What ``feral serve`` logs about a catch-up: its progress in steps (failures, once per streak,
are logged by :class:`feral.storage.link.FailureLog`, which the simulated devices share).

A link fails the same way on every retry while the cause lasts (a lock, a full disk), and a
catch-up of 100,000 entries comes in 100 pages: the log says each thing once, or in steps.
"""

from __future__ import annotations

import logging

__all__ = ["ProgressLog"]

log = logging.getLogger("feral.peer")


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
