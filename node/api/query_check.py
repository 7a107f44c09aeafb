"""Unknown query parameters are refused, never ignored (issue 15, item 6).

``POST /api/memory/search?top_k=3`` used to answer as if ``top_k`` had been heard. Endpoints
that read their query string (``GET /api/memory/episodes``, ``/api/memory/list``,
``/api/graph/entities``) declare it with :func:`reads_query` and check every parameter against
their own structure; every other endpoint refuses any parameter with the same 422 error a
misspelt key in a checked query gets, before the handler runs, so nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from msgspec import Struct
from starlette.requests import Request

from .bodies import fit

__all__ = ["reads_query", "refuse_unread_query"]

F = TypeVar("F", bound=Callable[..., object])

_MARK = "_feral_reads_query"


def reads_query(handler: F) -> F:
    """Mark ``handler`` as one that checks its own query parameters."""
    setattr(handler, _MARK, True)
    return handler


class _NoQuery(Struct, forbid_unknown_fields=True):
    """No parameter at all: the query of an endpoint that reads none."""


def refuse_unread_query(request: Request, handler: Callable[..., object]) -> None:
    """Raise the 422 of an unknown key when ``handler`` reads no query but one was sent."""
    if request.query_params and not getattr(handler, _MARK, False):
        fit(dict(request.query_params), _NoQuery, from_strings=True, top="the query")
