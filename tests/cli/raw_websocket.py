"""A WebSocket client written by hand, for what no well-behaved client library will do.

The hostile tests need two things the websockets library rightly refuses: a frame with the
compression bit set on a link that never negotiated compression, and a peer that leaves the
server's frames unread in its socket (the library reads in the background and answers pings).
Frames follow RFC 6455 §5.2; a client masks every frame it sends (§5.3).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import secrets
import socket
import struct
import zlib
from dataclasses import dataclass, field

from websockets.utils import apply_mask

from feral.node.links.tls import client_context

__all__ = [
    "OP_BINARY",
    "OP_CLOSE",
    "OP_CONTINUATION",
    "OP_PING",
    "OP_TEXT",
    "RawWebSocket",
    "close_code_of",
    "deflate_bomb",
    "fragments",
    "frame_bytes",
    "open_raw",
]

OP_CONTINUATION = 0x0
OP_TEXT = 0x1
OP_BINARY = 0x2
OP_CLOSE = 0x8
OP_PING = 0x9
FIN = 0x80
RSV1 = 0x40


def frame_bytes(
    payload: bytes,
    *,
    opcode: int = OP_BINARY,
    fin: bool = True,
    rsv1: bool = False,
    masked: bool = True,
) -> bytes:
    """One client frame, masked unless told otherwise; ``rsv1`` marks it compressed (RFC 7692
    §6); ``fin=False`` leaves the message open for continuation frames."""
    first = (FIN if fin else 0) | (RSV1 if rsv1 else 0) | opcode
    mask_bit = 0x80 if masked else 0
    size = len(payload)
    if size < 126:
        head = struct.pack("!BB", first, mask_bit | size)
    elif size < 1 << 16:
        head = struct.pack("!BBH", first, mask_bit | 126, size)
    else:
        head = struct.pack("!BBQ", first, mask_bit | 127, size)
    if not masked:
        return head + payload
    mask = secrets.token_bytes(4)
    return head + mask + apply_mask(payload, mask)


def deflate_bomb(inflated_size: int) -> bytes:
    """``inflated_size`` zero bytes, deflated as permessage-deflate sends them (RFC 7692
    §7.2.1: the empty block's tail is dropped); 64 MiB shrink to about 64 KiB."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = squeeze.compress(bytes(inflated_size)) + squeeze.flush(zlib.Z_SYNC_FLUSH)
    return data[:-4]


def fragments(payload: bytes, count: int) -> list[bytes]:
    """One binary message of ``count`` frames, each carrying ``payload`` (RFC 6455 §5.4)."""
    middle = [frame_bytes(payload, opcode=OP_CONTINUATION, fin=False)] * (count - 2)
    last = frame_bytes(payload, opcode=OP_CONTINUATION)
    return [frame_bytes(payload, fin=False), *middle, last]


def close_code_of(payload: bytes) -> int | None:
    """The status code in a close frame's payload (None when it carries none)."""
    return int(struct.unpack("!H", payload[:2])[0]) if len(payload) >= 2 else None


@dataclass
class RawWebSocket:
    """An upgraded connection read only when the test asks: frames in and out, nothing
    answered or buffered behind the test's back (so unread bytes stay in the kernel)."""

    sock: socket.socket
    response: str
    """The server's upgrade answer: status line and headers."""
    pending: bytearray = field(default_factory=bytearray)
    """Bytes received and not yet taken."""
    stream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
    """Over TLS: the encrypted stream, read and written instead of ``sock``."""

    async def send(self, payload: bytes) -> None:
        """One binary message in one frame."""
        await self.send_raw(frame_bytes(payload))

    async def send_raw(self, data: bytes) -> None:
        """Bytes as they are: frames made by :func:`frame_bytes`, or anything else."""
        if self.stream is not None:
            self.stream[1].write(data)
            await self.stream[1].drain()
            return
        await asyncio.get_running_loop().sock_sendall(self.sock, data)

    async def receive(self) -> tuple[int, bytes]:
        """The server's next frame as ``(opcode, payload)``; servers never mask (RFC 6455 §5.1).

        Raises:
            EOFError: the server ended the connection first.
        """
        first, second = await self.take(2)
        size = second & 0x7F
        if size == 126:
            size = struct.unpack("!H", await self.take(2))[0]
        elif size == 127:
            size = struct.unpack("!Q", await self.take(8))[0]
        return first & 0x0F, await self.take(size)

    async def take(self, size: int) -> bytes:
        while len(self.pending) < size:
            await self.fill()
        data = bytes(self.pending[:size])
        del self.pending[:size]
        return data

    async def fill(self) -> None:
        """Wait for more bytes from the server."""
        if self.stream is not None:
            chunk = await self.stream[0].read(1 << 16)
        else:
            chunk = await asyncio.get_running_loop().sock_recv(self.sock, 1 << 16)
        if not chunk:
            raise EOFError(f"the connection ended with {len(self.pending)} bytes unread")
        self.pending += chunk

    async def aclose(self) -> None:
        if self.stream is not None:
            self.stream[1].transport.abort()  # no TLS goodbye: the server may be gone already
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.stream[1].wait_closed(), 5)
        self.sock.close()


async def open_raw(
    port: int,
    *,
    path: str = "/sync",
    extensions: str | None = None,
    receive_buffer: int | None = None,
    tls: bool = False,
) -> RawWebSocket:
    """Connect to 127.0.0.1:``port`` and upgrade ``path``, offering ``extensions`` if given.

    ``receive_buffer`` shrinks the socket's receive buffer before connecting, so a peer that
    stops reading fills up after a few KiB rather than after the kernel's megabytes.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.setblocking(False)
    raw = RawWebSocket(sock, "")
    try:
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        if tls:  # the frames go inside TLS (feral serve --tls); the pin plays no part here
            raw.stream = await asyncio.open_connection(
                sock=sock, ssl=client_context(), server_hostname="localhost"
            )
        await raw.send_raw(upgrade_request(port, path, extensions))
        while b"\r\n\r\n" not in raw.pending:
            await raw.fill()
        head, _, rest = bytes(raw.pending).partition(b"\r\n\r\n")
        raw.response, raw.pending = head.decode("latin-1"), bytearray(rest)
    except BaseException:
        sock.close()
        raise
    if not raw.response.startswith("HTTP/1.1 101"):
        sock.close()
        raise AssertionError(f"upgrade refused: {raw.response}")
    return raw


def upgrade_request(port: int, path: str, extensions: str | None) -> bytes:
    key = base64.b64encode(secrets.token_bytes(16)).decode()
    lines = [
        f"GET {path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
    ]
    if extensions is not None:
        lines.append(f"Sec-WebSocket-Extensions: {extensions}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")
