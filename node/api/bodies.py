"""Reading requests: a body (bounded) decoded and converted into its declared structure.

A body is decoded by the parser settings use too (node/settings/validation.py: no repeated keys, no
NaN) and converted into its structure (:class:`~feral.node.recall.search.SearchRequest`,
:class:`RememberRequest`, :class:`EpisodesQuery`), whose types carry the limits
(node/settings/limits.py); a value that does not fit is a 422 naming the field. The OpenAPI document
(node/api/schema.py) is generated from the same structures, so what is documented is what is
checked.
"""

from __future__ import annotations

from typing import TypeVar

import msgspec
from msgspec import Struct
from starlette.requests import ClientDisconnect, Request

from feral.node.settings.limits import DEFAULT_EPISODES, EpisodeLimit, Text
from feral.node.settings.scopes import Scope
from feral.node.settings.validation import Invalid, JsonRefused, convert, parse_json

from .errors import ApiError, invalid

__all__ = [
    "DRAIN_LIMIT",
    "MAX_BODY_BYTES",
    "TRIPLE",
    "EpisodesQuery",
    "RememberRequest",
    "fit",
    "read_body",
    "read_json",
]

MAX_BODY_BYTES = 1024 * 1024
"""The largest request body read (1 MiB); a larger one is answered 413."""
DRAIN_LIMIT = 8 * MAX_BODY_BYTES
"""An oversized body up to this size is read and dropped before the 413, so the client sees the
answer instead of a reset connection; a bigger one (as declared or as sent) is cut off."""
TRIPLE = ("subject", "predicate", "object")
B = TypeVar("B")


class RememberRequest(Struct, frozen=True, forbid_unknown_fields=True):
    """``{"fact"}`` (phrasing rules make it a triple) or ``{"subject", "predicate", "object"}``."""

    fact: Text | None = None
    subject: Text | None = None
    predicate: Text | None = None
    object_: Text | None = msgspec.field(default=None, name="object")
    scope: Scope | None = None
    """Whose fact it is (``user``, ``agent:NAME``, ``session:ID``); ``None`` keeps its scope."""
    keep_both: bool = False
    """Write what would be merged or superseded beside the stored fact (``related_to``)."""

    def triple(self) -> tuple[str, str, str] | None:
        """The explicit triple, or ``None`` when the body gives a ``fact``.

        Raises:
            ApiError: both or neither, or only part of a triple.
        """
        parts = (self.subject, self.predicate, self.object_)
        if self.fact is not None:
            if any(p is not None for p in parts):
                raise invalid("give fact or subject/predicate/object, not both")
            return None
        if self.subject is None or self.predicate is None or self.object_ is None:
            if any(p is not None for p in parts):
                raise invalid("subject, predicate and object go together")
            raise invalid("give fact, or subject, predicate and object")
        return (self.subject, self.predicate, self.object_)


class EpisodesQuery(Struct, frozen=True, forbid_unknown_fields=True):
    """The query parameters of ``GET /api/memory/episodes``; others are refused."""

    limit: EpisodeLimit = DEFAULT_EPISODES
    """How many of the newest episodes to list."""


async def read_body(request: Request) -> bytes:
    """The body, at most :data:`MAX_BODY_BYTES` (else 413)."""
    too_large = ApiError(413, "too_large", f"the request body is over {MAX_BODY_BYTES} bytes")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > DRAIN_LIMIT:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > DRAIN_LIMIT:
                break
            if size <= MAX_BODY_BYTES:
                chunks.append(chunk)
    except ClientDisconnect as exc:
        raise ApiError(400, "bad_request", "the client went away mid-body") from exc
    if size > MAX_BODY_BYTES:
        raise too_large
    return b"".join(chunks)


async def read_json(request: Request, type_: type[B]) -> B:
    """The body as ``type_``: 400 when it is not JSON, 422 when it does not fit."""
    raw = await read_body(request)
    if not raw.strip():
        raise ApiError(400, "bad_json", "the request body is empty: send a JSON object")
    try:
        data = parse_json(raw)
    except JsonRefused as exc:
        raise ApiError(400, "bad_json", str(exc)) from exc
    return fit(data, type_)


def fit(data: object, type_: type[B], *, from_strings: bool = False, top: str = "the body") -> B:
    """``data`` as ``type_``, or a 422 naming the field that does not fit."""
    try:
        return convert(data, type_, from_strings=from_strings, top=top)
    except Invalid as exc:
        raise invalid(str(exc)) from exc
