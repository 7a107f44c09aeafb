"""The HTTP API on the node's port: who may call (guard), what it answers (routes), what it
reads (bodies), how it refuses (errors), and the OpenAPI document made from the bodies (schema).

``OPENAPI`` is the document; it is made on first use, so importing this package (the CLI does,
for :data:`API_TOKEN_FILE`) does not pay for it.
"""

from __future__ import annotations

from .bodies import MAX_BODY_BYTES, EpisodesQuery, RememberRequest
from .errors import ApiError, error_response
from .guard import API_TOKEN_FILE, ApiGuard, is_loopback_host, load_or_create_api_token
from .json_shapes import JsonObject
from .routes import MemoryApi
from .schema import openapi_document

__all__ = [
    "API_TOKEN_FILE",
    "MAX_BODY_BYTES",
    "OPENAPI",
    "ApiError",
    "ApiGuard",
    "EpisodesQuery",
    "MemoryApi",
    "RememberRequest",
    "error_response",
    "is_loopback_host",
    "load_or_create_api_token",
    "openapi_document",
]


def __getattr__(name: str) -> JsonObject:
    if name == "OPENAPI":
        return openapi_document()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
