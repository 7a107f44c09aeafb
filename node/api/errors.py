"""How the API refuses: one exception and one JSON shape, ``{"error": {"code", "message"}}``.

The guard (node/api/guard.py) and the routes (node/api/routes.py) both answer with it, and the
OpenAPI document (node/api/schema.py) describes it.
"""

from __future__ import annotations

from starlette.responses import JSONResponse

__all__ = ["ApiError", "error_response", "invalid"]


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
