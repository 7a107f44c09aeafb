"""Scopes: whose a memory is. ``user`` (the default), ``agent:NAME`` or ``session:ID``.

A scope is the ``scope`` column of a memory's replicated meta row (storage/memory/memory_model.py);
a memory without one is the user's. Episodes made by ``ingest`` stay the user's too: they are the
record of what the user said, and ``gc`` (which archives stale session facts) must not archive a
conversation's history by itself. Facts are put in a session's scope with ``--scope session:ID``;
``distill`` promotes them to the user's.

Scopes never move a row behind the user's back: a fact absorbed in a session's or agent's scope
never rewrites or archives a row of another scope (node/absorb/pipeline.py's ``within_scope``: a new
value of the user's doctor said in a session sits beside the user's, related, instead of archiving
it), and a session repeating what the user already holds leaves the user's row where it is. The way
up is ``distill`` (or the user stating the fact in their own scope).

:data:`Scope` is the one declaration of the format, for settings-style checks in the API's
bodies (node/settings/validation.py) and, through :func:`check_scope`, the CLI's options.
"""

from __future__ import annotations

import re
from typing import Annotated

from msgspec import Meta

from feral.storage.memory.memory_model import DEFAULT_SCOPE
from feral.sync.errors import InvalidInput

__all__ = [
    "DEFAULT_SCOPE",
    "SCOPE_PATTERN",
    "SCOPE_REQUIREMENT",
    "SESSION_PREFIX",
    "Scope",
    "check_scope",
    "session_scope",
]

SESSION_PREFIX = "session:"
SCOPE_PATTERN = r"^(user|agent:[A-Za-z0-9._@-]{1,128}|session:[A-Za-z0-9._@-]{1,128})$"
"""``user``, or ``agent:`` / ``session:`` and 1 to 128 letters, digits or ``. _ @ -``: no spaces
or other colons, so a scope reads the same in a terminal, a URL and a log line."""
SCOPE_REQUIREMENT = (
    'must be "user", "agent:NAME" or "session:ID" (NAME and ID: 1-128 of A-Z a-z 0-9 . _ @ -)'
)
_SCOPE = re.compile(SCOPE_PATTERN)

Scope = Annotated[str, Meta(pattern=SCOPE_PATTERN, extra={"requirement": SCOPE_REQUIREMENT})]


def check_scope(text: str) -> str:
    """``text`` if it is a scope.

    Raises:
        InvalidInput: it is not.
    """
    if not _SCOPE.match(text):
        raise InvalidInput(f"scope {SCOPE_REQUIREMENT}, got {text!r}")
    return text


def session_scope(session_id: str) -> str:
    """The scope of a session's facts (checked, so a session id with spaces is refused)."""
    return check_scope(SESSION_PREFIX + session_id)
