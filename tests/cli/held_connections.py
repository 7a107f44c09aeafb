"""Connections that never authenticate, held open against a real ``feral serve`` from a thread.

Half of them stop in the middle of the HTTP upgrade (a request head that never ends), half
finish the upgrade and then say nothing. Whenever the server closes one, the holder opens
another at once, as an attacker keeping the server busy would, and counts the reopenings.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time
from collections.abc import Iterator

from .raw_websocket import upgrade_request

__all__ = ["HeldConnections", "holding"]

POLL_S = 0.05


class HeldConnections:
    """``count`` raw TCP connections to ``port`` on loopback, kept at that number."""

    def __init__(self, port: int, count: int) -> None:
        self.port = port
        self.count = count
        self.reopened = 0
        """Connections the server closed and the holder opened again."""
        self.refused = 0
        """Attempts to connect that failed outright."""
        self.answered = 0
        """Upgraded connections the server has answered (taken in), reopened ones too."""
        self._answered: set[socket.socket] = set()
        self._stop = threading.Event()
        self._selector = selectors.DefaultSelector()
        self._open = 0
        self._thread = threading.Thread(target=self._hold, daemon=True)

    @property
    def open(self) -> int:
        return self._open

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _hold(self) -> None:
        for index in range(self.count):
            self._connect(upgraded=index % 2 == 1)
        while not self._stop.is_set():
            for key, _ in self._selector.select(POLL_S):
                sock, upgraded = key.fileobj, key.data
                assert isinstance(sock, socket.socket)
                try:
                    data = sock.recv(65536)
                except OSError:
                    data = b""
                if not data:  # closed by the server: open another in its place
                    self._drop(sock)
                    self.reopened += 1
                    self._connect(upgraded=upgraded)
                elif sock not in self._answered:
                    self._answered.add(sock)
                    self.answered += 1
        for key in list(self._selector.get_map().values()):
            assert isinstance(key.fileobj, socket.socket)
            self._drop(key.fileobj)

    def _connect(self, *, upgraded: bool) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        except OSError:
            self.refused += 1
            time.sleep(POLL_S)
            return
        request = upgrade_request(self.port, "/sync", None)
        sock.sendall(request if upgraded else request[: len(request) // 2])
        sock.setblocking(False)
        self._selector.register(sock, selectors.EVENT_READ, upgraded)
        self._open += 1

    def _drop(self, sock: socket.socket) -> None:
        self._selector.unregister(sock)
        self._answered.discard(sock)
        sock.close()
        self._open -= 1


@contextlib.contextmanager
def holding(port: int, count: int) -> Iterator[HeldConnections]:
    """Hold ``count`` unauthenticated connections to ``port`` for the ``with`` block."""
    held = HeldConnections(port, count)
    held.start()
    try:
        yield held
    finally:
        held.stop()
