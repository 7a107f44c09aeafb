"""``remember`` and ``search`` handed to the ``feral serve`` on the same home, or its resident.

Loading the node and the embedding model costs a command most of a second of CPU; a running
``feral serve`` has both loaded, and is the one process that writes the home while it runs. So
before importing the node, these commands read ``HOME/serve.runtime.json``
(node/home/serve_runtime.py) and, when a live server wrote it, send their request to that server's
own API routes over loopback (``POST /api/memory/remember`` and ``/api/memory/search``), with
the authentication the API asks of any caller: no browser headers, a loopback ``Host``, and
the bearer token of ``HOME/api_token`` when the server asks for one. The command then prints
the answer exactly as it prints its own.

The command does the work itself, as before, when no server runs, when its file is stale (the
process is gone, or the port refuses), when the server serves TLS, or when the server cannot
answer the request as the command would (an older server without the route, a body the API
refuses, an unexpected error): a request is never lost to the hand-off. An error of the node
itself (a secret refused, a store that fails) is the command's answer, printed as its own.

With no server on the home, the same request goes to the home's resident node when one runs
(``HOME/resident.json``, node/home/resident_runtime.py): a process that a command working alone
started for the next commands (cli/resident.py), answering the same two routes on 127.0.0.1
with the token it wrote into that file. A running server is always asked first: it is the one
process that writes the home while it runs, and a resident stops once one starts.

Before anything of the user's is sent, the command makes sure the port is the process the file
names: on the same connection it first asks ``GET /api/handoff/proof`` with a random challenge,
and goes on only if the answer is the challenge keyed with the file's secret (the serve's
nonce, the resident's token: node/serve/handoff_proof.py). A program that took the port after the
process freed it learns nothing, and the command does the work itself.

The request is written by hand over a socket (HTTP/1.1, ``Connection: close``): the standard
``http.client`` imports the email parser and ssl, which cost a command more than the request.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

from feral.node.home.resident_runtime import live_resident
from feral.node.home.serve_runtime import (
    CHALLENGE_HEADER,
    PROOF_PATH,
    handoff_proof,
    live_serve_runtime,
)
from feral.sync.errors import FeralError, InvalidArgument

__all__ = ["ServeAnswer", "hand_to_serve"]

CONNECT_TIMEOUT_S = 2.0
"""A server on this machine accepts at once or refuses; longer means it is not answering."""
ANSWER_TIMEOUT_S = 120.0
"""Long enough for a server busy catching a peer up; a hung one is left, and the work done here."""
PROOF_TIMEOUT_S = 10.0
"""How long the process the file names may take to prove it is that process."""
MAX_ANSWER_BYTES = 64 * 1024 * 1024
MAX_PROOF_BYTES = 64 * 1024
NODE_ERROR_CODES = frozenset(
    {
        "refused",
        "invalid_value",
        "bad_settings",
        "invalid_argument",
        "invalid_input",
        "secret_refused",
        "not_available",
        "home_file",
        "storage_error",
    }
)
"""The ``error.code`` of a refusal by the node itself (sync/errors.py's table): the command's
own answer. Anything else (the API's own refusals of a body or a caller, an unknown route, an
internal error) makes the command do the work itself."""

ServeAnswer = dict[str, Any]


class ServeRefusal(FeralError):
    """A refusal by the node behind the running server, told as the command tells its own."""


def hand_to_serve(home: Path, path: str, body: dict[str, Any]) -> ServeAnswer | None:
    """The running server's answer to ``POST path`` with ``body``, or ``None`` when there is
    no server to ask or it cannot answer as the command would (see the module).

    Raises:
        FeralError: the node refused (a secret, a failing store); exit 2 for a bad argument.
    """
    runtime = live_serve_runtime(home)
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if runtime is not None:
        if runtime.tls:
            return None
        if runtime.token:
            token = _api_token(home)
            if token is None:
                return None
            headers["Authorization"] = f"Bearer {token}"
        where = (runtime.dial_host, runtime.port, runtime.nonce)
        return _answer(_post(where, path, body, headers))
    resident = live_resident(home)
    if resident is None:
        return None
    headers["Authorization"] = f"Bearer {resident.token}"
    return _answer(_post(("127.0.0.1", resident.port, resident.token), path, body, headers))


def _answer(reply: tuple[int, object] | None) -> ServeAnswer | None:
    """The answer of a reply, the node's refusal raised, or ``None`` (do the work here)."""
    if reply is None:
        return None
    status, data = reply
    if status == 200 and isinstance(data, dict):
        return data
    _raise_node_error(data)
    return None


def _raise_node_error(data: object) -> None:
    """Raise the node's own refusal in ``data`` (``{"error": {"code", "message"}}``), if so."""
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return
    code, message = error.get("code"), error.get("message")
    if code not in NODE_ERROR_CODES or not isinstance(message, str):
        return
    if code == InvalidArgument.code:
        raise InvalidArgument(message)
    raise ServeRefusal(message)


def _api_token(home: Path) -> str | None:
    """The token the API asks for (``HOME/api_token``, which only its owner can read)."""
    try:
        token = (home / "api_token").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return token or None


def _post(
    where: tuple[str, int, str], path: str, body: dict[str, Any], headers: dict[str, str]
) -> tuple[int, object] | None:
    """One request on a fresh connection to ``where`` (host, port, and the secret its process
    proves it holds): the status and the decoded JSON, or ``None`` when the server refuses
    the connection, cannot prove it is the process, goes away or answers no JSON."""
    host, port, key = where
    payload = json.dumps(body).encode()
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    fields = {"Host": authority, "Connection": "close", "Content-Length": str(len(payload))}
    head = [f"POST {path} HTTP/1.1", *(f"{k}: {v}" for k, v in {**fields, **headers}.items())]
    request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload
    try:
        with _connect(host, port) as sock:
            if not _proves(sock, authority, key):
                return None
            sock.settimeout(ANSWER_TIMEOUT_S)
            sock.sendall(request)
            raw = _read_all(sock)
    except OSError:
        return None
    return _parse_response(raw) if raw is not None else None


def _proves(sock: socket.socket, authority: str, key: str) -> bool:
    """Whether the process on ``sock`` answers a fresh challenge keyed with ``key`` (the
    connection stays open for the request that follows)."""
    challenge = os.urandom(16).hex()
    request = (f"GET {PROOF_PATH} HTTP/1.1\r\nHost: {authority}\r\n"
               f"{CHALLENGE_HEADER}: {challenge}\r\n\r\n")  # fmt: skip
    sock.settimeout(PROOF_TIMEOUT_S)
    sock.sendall(request.encode("latin-1"))
    reply = _parse_response(_read_one(sock))
    if reply is None or reply[0] != 200 or not isinstance(reply[1], dict):
        return False
    return reply[1].get("proof") == handoff_proof(key, challenge)


def _read_one(sock: socket.socket) -> bytes:
    """One response with a ``Content-Length`` body, read without waiting for the close (the
    connection is kept); what came so far if it is not that, or too long."""
    raw = b""
    while b"\r\n\r\n" not in raw and len(raw) < MAX_PROOF_BYTES:
        chunk = sock.recv(65536)
        if not chunk:
            return raw
        raw += chunk
    head = raw.partition(b"\r\n\r\n")[0]
    lines = head.decode("latin-1").lower().split("\r\n")
    lengths = [x.partition(":")[2].strip() for x in lines if x.startswith("content-length:")]
    if len(lengths) != 1 or not lengths[0].isdigit():
        return raw
    total = min(len(head) + 4 + int(lengths[0]), MAX_PROOF_BYTES)
    while len(raw) < total and (chunk := sock.recv(65536)):
        raw += chunk
    return raw


def _connect(host: str, port: int) -> socket.socket:
    """A connection to the first of ``host``'s addresses that accepts (as
    :func:`socket.create_connection`, but an ASCII name is resolved as bytes: a str would make
    the resolver import the IDNA codec, which costs more than the connection)."""
    name = host.encode("ascii") if host.isascii() else host
    refused: OSError = OSError(f"no address for {host}")
    for family, kind, proto, _, address in socket.getaddrinfo(name, port, type=socket.SOCK_STREAM):
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(CONNECT_TIMEOUT_S)
            sock.connect(address)
        except OSError as exc:
            sock.close()
            refused = exc
            continue
        return sock
    raise refused


def _read_all(sock: socket.socket) -> bytes | None:
    """Everything the server sends until it closes (``Connection: close``); ``None`` if too much."""
    chunks: list[bytes] = []
    size = 0
    while chunk := sock.recv(65536):
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _parse_response(raw: bytes) -> tuple[int, object] | None:
    """An HTTP/1.1 response with a ``Content-Length`` body of JSON, or ``None``."""
    head, separator, body = raw.partition(b"\r\n\r\n")
    if not separator:
        return None
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        return None
    fields = dict(line.partition(":")[::2] for line in header_lines)
    lengths = [v.strip() for k, v in fields.items() if k.strip().lower() == "content-length"]
    if len(lengths) != 1 or not lengths[0].isdigit() or int(lengths[0]) != len(body):
        return None  # cut short, or chunked: not an answer to trust
    try:
        return int(parts[1]), json.loads(body)
    except ValueError:
        return None
