"""How the API refuses: one exception, one JSON shape, ``{"error": {"code", "message"}}``, and
the HTTP status of each kind of the error tree.

The guard (node/api/guard.py) and the routes (node/api/routes.py) both answer with it, and the
OpenAPI document (node/api/schema.py) describes it. The tree (sync/errors.py) says what went
wrong and its ``code``; the status it is answered with is the API's own, so it is mapped here
(:data:`HTTP_STATUS`), as the ``feral`` command maps exit statuses in cli/context.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from starlette.responses import JSONResponse

from feral.storage.db.errors import StorageError
from feral.sync.errors import (
    ConfigError,
    FeralError,
    HomeFileError,
    InvalidInput,
    NotAvailable,
    NotFoundError,
    ProtocolError,
)

__all__ = ["HTTP_STATUS", "ApiError", "error_response", "http_status", "invalid"]

HTTP_STATUS: Final[Mapping[type[FeralError], int]] = MappingProxyType(
    {
        FeralError: 400,  # refused on purpose; InvalidArgument too (a bad argument, not 409)
        ProtocolError: 422,
        ConfigError: 500,  # the node's own settings are at fault, not the request
        InvalidInput: 422,
        NotAvailable: 409,
        NotFoundError: 404,
        HomeFileError: 500,  # the node's own files are at fault, not the request
        StorageError: 500,  # the database failed: the request was not at fault
    }
)
"""The status each kind is answered with; a kind not named is answered as its nearest
ancestor that is (tests/node/test_api_errors.py holds every kind of the tree to its status)."""


def http_status(kind: type[FeralError]) -> int:
    """The status the API answers a ``kind`` error with: its own row, or its nearest
    ancestor's (the class's MRO), so a kind declared anywhere is answered."""
    return next(HTTP_STATUS[cls] for cls in kind.__mro__ if cls in HTTP_STATUS)


class ApiError(Exception):
    """A request the API refuses: the HTTP status, a stable code and a message for people."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """``{"error": {"code", "message"}}`` with ``status``."""
    return JSONResponse({"error": {"code": code, "message": message}}, status, headers)


def invalid(message: str) -> ApiError:
    """A request whose fields do not fit what the route takes (422)."""
    return ApiError(422, "invalid_request", message)
