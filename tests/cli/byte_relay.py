"""A TCP relay on loopback that keeps every byte it carries, both ways, for a test to search.

A device dials the relay's port instead of its peer's; the relay connects to the peer and
copies bytes across until either side closes. Sync links are plain ``ws://`` with no
compression, so what replicates crosses the relay as it is stored, except that a WebSocket
client masks every frame it sends (RFC 6455 §5.3): :meth:`ByteRelay.bytes_seen` also holds
those frames' payloads unmasked, so both directions can be searched.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

__all__ = ["ByteRelay", "byte_relay"]

CHUNK = 65536


class ByteRelay:
    """Listening on ``port``; forwards each connection to ``127.0.0.1:target``."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.lock = threading.Lock()
        self.carried = bytearray()
        self.sent_by_clients: list[bytearray] = []
        self.connections = 0
        self.threads: list[threading.Thread] = []
        self.sockets: list[socket.socket] = []
        self.closed = threading.Event()

    def bytes_seen(self) -> bytes:
        """Every byte carried, then each client's frames unmasked."""
        with self.lock:
            streams = [bytes(stream) for stream in self.sent_by_clients]
            return bytes(self.carried) + b"".join(unmasked_payloads(s) for s in streams)

    def serve(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            sent = bytearray()
            with self.lock:
                self.connections += 1
                self.sockets += [client, upstream]
                self.sent_by_clients.append(sent)
            for source, sink, log in ((client, upstream, sent), (upstream, client, None)):
                args = (source, sink, log)
                thread = threading.Thread(target=self.pipe, args=args, daemon=True)
                thread.start()
                self.threads.append(thread)

    def pipe(self, source: socket.socket, sink: socket.socket, log: bytearray | None) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(CHUNK):
                with self.lock:
                    self.carried += data
                    if log is not None:
                        log += data
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.closed.set()
        self.listener.close()
        with self.lock:
            for sock in self.sockets:
                sock.close()
        for thread in self.threads:
            thread.join(5)


def unmasked_payloads(stream: bytes) -> bytes:
    """The payloads of the WebSocket frames after the HTTP upgrade in ``stream``, unmasked."""
    head = stream.find(b"\r\n\r\n")
    if head < 0:
        return b""
    at, payloads = head + 4, bytearray()
    while at + 2 <= len(stream):
        masked, size = stream[at + 1] & 0x80, stream[at + 1] & 0x7F
        at += 2
        if size >= 126:
            width = 2 if size == 126 else 8
            size = int.from_bytes(stream[at : at + width], "big")
            at += width
        key = stream[at : at + 4] if masked else b"\0\0\0\0"
        at += 4 if masked else 0
        body = stream[at : at + size]
        payloads += bytes(b ^ key[i % 4] for i, b in enumerate(body))
        at += size
    return bytes(payloads)


@contextlib.contextmanager
def byte_relay(target: int) -> Iterator[ByteRelay]:
    """A relay to ``target`` running in a thread; closed, with its connections, on the way out."""
    relay = ByteRelay(target)
    acceptor = threading.Thread(target=relay.serve, daemon=True)
    acceptor.start()
    try:
        yield relay
    finally:
        relay.close()
        acceptor.join(5)
