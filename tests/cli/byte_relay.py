"""A TCP relay on loopback that keeps every byte it carries, both ways, for a test to search.

A device dials the relay's port instead of its peer's; the relay connects to the peer and
copies bytes across until either side closes. Sync links are plain ``ws://`` with no
compression, so what replicates crosses the relay as it is stored.
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
        self.connections = 0
        self.threads: list[threading.Thread] = []
        self.sockets: list[socket.socket] = []
        self.closed = threading.Event()

    def bytes_seen(self) -> bytes:
        with self.lock:
            return bytes(self.carried)

    def serve(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                self.connections += 1
                self.sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                thread = threading.Thread(target=self.pipe, args=(source, sink), daemon=True)
                thread.start()
                self.threads.append(thread)

    def pipe(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(CHUNK):
                with self.lock:
                    self.carried += data
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
