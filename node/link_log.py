"""What ``feral serve`` logs about a catch-up: its progress in steps (failures, once per streak,
are logged by :class:`feral.storage.link.FailureLog`, which the simulated devices share).

A link fails the same way on every retry while the cause lasts (a lock, a full disk), and a
catch-up of 100,000 entries comes in 100 pages: the log says each thing once, or in steps.
"""

from __future__ import annotations

import logging

from feral.sync.messages import Hello
from feral.sync.text import printable
from feral.sync.types import NodeId

__all__ = ["ProgressLog", "peer_label"]

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
