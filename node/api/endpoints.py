"""The types a route is made of, shared by every module of routes.

A handler answers a value (an answer structure of node/answers.py, a list of them, or a JSON
object) and :func:`feral.node.api.routes.MemoryApi`'s wrapper turns it into the JSON response,
and every failure into a JSON error; each group of routes takes that wrapper as a :data:`Wrap`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

__all__ = ["Endpoint", "Handler", "Wrap"]

Handler = Callable[[Request], Awaitable[object]]
"""A route's own code: what it answers is written as JSON by the wrapper, never read back."""

Endpoint = Callable[[Request], Awaitable[Response]]
"""What Starlette calls: a handler wrapped so that every answer and failure is a response."""

Wrap = Callable[[Handler], Endpoint]
"""The wrapper a group of routes is given (one for the whole API, so errors read alike)."""
