"""Adapters that give the server's and the client's WebSockets one small interface.

A text frame is not part of the protocol: it is handed to the session as an empty frame, which
fails to decode, so the peer gets the same typed error as for any other malformed frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

if TYPE_CHECKING:
    from starlette.websockets import WebSocket

__all__ = [
    "MAX_CLOSE_REASON_BYTES",
    "ClientTransport",
    "ServerTransport",
    "Transport",
    "close_reason",
]

MAX_CLOSE_REASON_BYTES = 123
"""A close frame is a control frame: 125 bytes at most, two of them the code (RFC 6455 §5.5)."""


def close_reason(text: str) -> str:
    """``text`` cut to fit a close frame, on a character boundary.

    Reasons often quote what the peer sent (a malformed node id, say): counting characters
    would let a peer's non-ASCII text overflow the frame, and the close would fail.
    """
    encoded = text.encode("utf-8", "replace")[:MAX_CLOSE_REASON_BYTES]
    return encoded.decode("utf-8", "ignore")


class ServerTransport:
    """The accepting side: a Starlette WebSocket (uvicorn runs it on the websockets library)."""

    def __init__(self, websocket: WebSocket, certificate: str | None = None) -> None:
        """``certificate``: this server's certificate fingerprint when it serves TLS."""
        # Starlette is imported by the server that makes this, never by a command that dials.
        from starlette.websockets import WebSocketDisconnect

        self.websocket = websocket
        self.encrypted = websocket.url.scheme == "wss"  # DESIGN §5: status says so
        self.certificate = certificate if self.encrypted else None
        self._closed = False
        self._gone = (WebSocketDisconnect, RuntimeError)

    async def recv(self) -> bytes | None:
        try:
            message = await self.websocket.receive()
        except self._gone:
            return None
        if message["type"] == "websocket.disconnect":
            self._closed = True
            return None
        data = message.get("bytes")
        return data if isinstance(data, bytes) else b""

    async def send(self, data: bytes) -> None:
        if not self._closed:
            try:
                await self.websocket.send_bytes(data)
            except (*self._gone, OSError):
                self._closed = True

    async def close(self, code: int, reason: str) -> None:
        if not self._closed:
            self._closed = True
            try:
                await self.websocket.close(code, close_reason(reason))
            except (*self._gone, OSError):
                pass  # the peer hung up first (after refusing us): there is nothing to close


class ClientTransport:
    """The dialling side: a websockets client connection."""

    def __init__(
        self, connection: ClientConnection, encrypted: bool, certificate: str | None = None
    ) -> None:
        """``certificate``: the fingerprint of the pinned certificate the server presented."""
        self.connection = connection
        self.encrypted = encrypted
        self.certificate = certificate

    async def recv(self) -> bytes | None:
        try:
            data = await self.connection.recv()
        except ConnectionClosed:
            return None
        return data if isinstance(data, bytes) else b""

    async def send(self, data: bytes) -> None:
        try:
            await self.connection.send(data)
        except ConnectionClosed:
            pass  # the next recv() reports the end

    async def close(self, code: int, reason: str) -> None:
        await self.connection.close(code, close_reason(reason))


class Transport(Protocol):
    """A message-oriented, ordered connection (a WebSocket)."""

    encrypted: bool

    async def recv(self) -> bytes | None:
        """The next binary frame, or ``None`` once the connection has ended."""

    async def send(self, data: bytes) -> None: ...

    async def close(self, code: int, reason: str) -> None: ...
