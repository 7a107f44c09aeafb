"""How a node's log tells of failing links: once per failure, not once per retry
(:class:`FailureLog`, which storage/link/handler.py's handler and the simulated devices share)."""

from __future__ import annotations

import logging

__all__ = ["FailureLog"]

log = logging.getLogger("feral.peer")


class FailureLog:
    """The serve log's account of failing links: one line per failure, not one per retry.

    A lock held by a long import (or a full disk) fails every reconnect the same way until it
    is gone; the log says so once, and again only when the failure changes or after the link
    with that peer came up again in between. Kept in storage, beside the link handler, so the
    simulated devices account for their failures with the node's own rule.
    """

    def __init__(self, logger: logging.Logger = log) -> None:
        self._last: dict[str, str] = {}
        self._log = logger

    def failed(self, who: str, message: str) -> bool:
        """The link with ``who`` (a node id, or what else names it) failed with ``message``;
        returns whether that was news (and so logged)."""
        if self._last.get(who) == message:
            return False
        self._last[who] = message
        self._log.warning("! link with %s failed: %s (the link will be retried)", who, message)
        return True

    def crashed(self, who: str, exc: Exception) -> None:
        """An unexpected error (a defect) ended the link: its traceback, once per streak."""
        message = f"{type(exc).__name__}: {exc}"
        if self._last.get(who) != message:
            self._last[who] = message
            self._log.error("! link with %s crashed (the link will be retried)", who, exc_info=exc)

    def recovered(self, who: str) -> None:
        """A link with ``who`` authenticated and recorded it: the next failure is news."""
        if self._last.pop(who, None) is not None:
            self._log.info("= link with %s is up again", who)
