"""Who may call the API: the browser, Host and token checks of every plain HTTP request.

Security (TEST-CATALOG, "Security baseline"): ``feral serve`` binds to loopback by default. Bound
to any other address the API needs ``Authorization: Bearer <token>``, the token being the
contents of ``<home>/api_token`` (made on the first such serve, mode 0600; compared with
:func:`hmac.compare_digest`). Browsers are refused outright (any ``Origin`` header, or a
``Sec-Fetch-Site`` other than ``none``): the API serves no pages, so every browser request to it
is cross-site, CSRF or DNS rebinding. On loopback the ``Host`` header must name a loopback
address too, which stops a rebound page whose browser sends no ``Origin``. ``/sync`` keeps its
own authentication (signed handshakes between paired nodes) and is untouched by all of this.

:class:`ApiGuard` is a plain ASGI middleware registered through Starlette's ``Middleware``.
Starlette's ``TrustedHostMiddleware`` does not fit the Host rule: it matches names and
wildcards, not "any loopback address" (all of 127.0.0.0/8, ``::1``), and it answers a plain-text
400 where the API answers a JSON 403.
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from pathlib import Path

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from feral.node.home.identity import write_private_file
from feral.node.links.addresses import is_loopback_host
from feral.sync.errors import HomeFileError

from .errors import error_response

__all__ = [
    "API_TOKEN_FILE",
    "MAX_TOKEN_CHARS",
    "MIN_TOKEN_CHARS",
    "ApiGuard",
    "is_loopback_host",
    "load_or_create_api_token",
]

API_TOKEN_FILE = "api_token"
MIN_TOKEN_CHARS = 16
MAX_TOKEN_CHARS = 4096


def load_or_create_api_token(home: Path) -> tuple[str, bool]:
    """The API token kept in ``<home>/api_token``, made (mode 0600) if missing.

    Returns:
        The token, and whether it was just made.

    Raises:
        HomeFileError: the file cannot be read, is readable by other users, or holds no usable
            token (at least 16 printable characters, no spaces); the message names the file.
    """
    path = home / API_TOKEN_FILE
    try:
        with path.open("rb") as file:
            mode = os.fstat(file.fileno()).st_mode
            raw = file.read(MAX_TOKEN_CHARS + 1)
    except FileNotFoundError:
        token = secrets.token_urlsafe(32)
        write_private_file(path, (token + "\n").encode("ascii"))
        return token, True
    except OSError as exc:
        raise HomeFileError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if os.name == "posix" and stat.S_IMODE(mode) & 0o077:
        raise HomeFileError(
            f"{path}: readable by other users (mode {stat.S_IMODE(mode):o}); chmod 600 it"
        )
    try:
        token = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        token = ""
    if len(token) < MIN_TOKEN_CHARS or len(token) > MAX_TOKEN_CHARS or not _token_chars(token):
        raise HomeFileError(
            f"{path}: the API token must be {MIN_TOKEN_CHARS} to {MAX_TOKEN_CHARS} printable ASCII "
            "characters without spaces; delete the file to have a new one made"
        )
    return token, False


def _token_chars(token: str) -> bool:
    return all(33 <= ord(ch) <= 126 for ch in token)


class ApiGuard:
    """ASGI middleware for every plain HTTP request: browsers, Host and token (see the module).

    WebSocket scopes (``/sync``) pass through untouched: peers authenticate in the handshake.
    """

    def __init__(self, app: ASGIApp, *, token: str | None, loopback_only: bool) -> None:
        self.app = app
        self.token = token.encode() if token is not None else None
        self.loopback_only = loopback_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(Headers(scope=scope))
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def refusal(self, headers: Headers) -> Response | None:
        """Why this request may not reach a route (as the answer to send), or ``None``."""
        if "origin" in headers or headers.get("sec-fetch-site", "none") != "none":
            return error_response(403, "browser_refused", "browsers may not call the feral API")
        if self.loopback_only and not _loopback_host_header(headers.get("host", "")):
            return error_response(
                403, "host_refused", "the API on loopback answers only to a loopback Host"
            )
        if self.token is None:
            return None
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            return error_response(
                401,
                "unauthorized",
                "this API needs 'Authorization: Bearer <token>' (the token is in HOME/api_token)",
                {"WWW-Authenticate": 'Bearer realm="feral"'},
            )
        if not hmac.compare_digest(given.strip().encode(), self.token):
            return error_response(
                401,
                "unauthorized",
                "wrong API token",
                {"WWW-Authenticate": 'Bearer realm="feral", error="invalid_token"'},
            )
        return None


def _loopback_host_header(value: str) -> bool:
    """Whether a Host header (``name``, ``name:port``, ``[v6]:port``) names a loopback host."""
    if value.startswith("["):
        name = value[1 : value.find("]")] if "]" in value else ""
    else:
        name = value.rsplit(":", 1)[0] if value.count(":") == 1 else value
    return bool(name) and is_loopback_host(name)
