"""The answer that tells a command it reached the process its runtime file names.

A ``feral serve`` (``HOME/serve.runtime.json``) and a resident (``HOME/resident.json``) write
where they answer into a file of the home; a command reads it and hands its request over
(cli/serve_handoff.py). The port in the file may belong to another program by then: the server
was killed, or freed the port as it stopped, and something else took it. So the command first
sends ``GET /api/handoff/proof`` with a fresh random challenge, and sends the user's fact and
the token only on the same connection, and only if the answer is
:func:`~feral.node.home.serve_runtime.handoff_proof` of the challenge, keyed with a secret of that
file (the serve's nonce, the resident's token) that only who can read the file knows.

The route is answered before the API's guard: it carries nothing of the user's and needs no
token (the command must not send the token before it knows who listens).
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

from feral.node.home.serve_runtime import CHALLENGE_HEADER, PROOF_PATH, handoff_proof

__all__ = ["MAX_CHALLENGE", "ProvesHandoff"]

MAX_CHALLENGE = 128
"""Longer challenges are refused: a command sends 32 hex digits."""


class ProvesHandoff:
    """ASGI wrapper: answers :data:`~feral.node.home.serve_runtime.PROOF_PATH`, passes the rest
    on."""

    def __init__(self, app: ASGIApp, key: str) -> None:
        self.app = app
        self.key = key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != PROOF_PATH:
            await self.app(scope, receive, send)
            return
        challenge = _challenge(scope)
        if scope["method"] != "GET" or challenge is None:
            refusal = {"code": "invalid_input", "message": "a challenge is needed"}
            await _send_json(send, 400, {"error": refusal})
            return
        await _send_json(send, 200, {"proof": handoff_proof(self.key, challenge)})


def _challenge(scope: Scope) -> str | None:
    """The request's challenge header, if it has one of printable ASCII and a sane length."""
    values = [v for k, v in scope["headers"] if k.decode("latin-1").lower() == CHALLENGE_HEADER]
    if len(values) != 1 or not 0 < len(values[0]) <= MAX_CHALLENGE:
        return None
    text = bytes(values[0]).decode("latin-1")
    return text if text.isascii() and text.isprintable() else None


async def _send_json(send: Send, status: int, body: object) -> None:
    payload = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(payload)).encode())]  # fmt: skip
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
