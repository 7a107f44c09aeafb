"""Men in the middle for the TLS tests: a relay that logs every byte it forwards, and an
impostor that terminates TLS with a certificate of its own and records what reaches it."""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = ["ImpostorRelay", "LoggingRelay"]


def _listener() -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    return listener


class LoggingRelay:
    """Forwards 127.0.0.1:``port`` to ``target_port`` both ways, keeping every byte it saw."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = _listener()
        self.port: int = self.listener.getsockname()[1]
        self.seen = bytearray()
        self.connections = 0
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []

    def wire(self) -> bytes:
        with self._lock:
            return bytes(self.seen)

    @contextlib.contextmanager
    def running(self) -> Iterator[LoggingRelay]:
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.listener.close()
            for sock in list(self._sockets):
                with contextlib.suppress(OSError):
                    sock.close()
            thread.join(timeout=5)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=10)
            upstream.settimeout(None)
            self._sockets += [client, upstream]
            self.connections += 1
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := source.recv(1 << 16):
                with self._lock:
                    self.seen += chunk
                sink.sendall(chunk)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


class ImpostorRelay:
    """A TLS server with another certificate: records handshakes done and the plaintext sent."""

    def __init__(self, certificate: Path, key: Path) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(certificate, key)
        self.listener = _listener()
        self.port: int = self.listener.getsockname()[1]
        self.handshakes = 0
        self.received = bytearray()
        """Every byte of application data any dialler sent after its TLS handshake."""

    @contextlib.contextmanager
    def running(self) -> Iterator[ImpostorRelay]:
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.listener.close()
            thread.join(timeout=5)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        client.settimeout(10)
        with contextlib.suppress(OSError):
            with self.context.wrap_socket(client, server_side=True) as tls:
                self.handshakes += 1
                while chunk := tls.recv(1 << 16):
                    self.received += chunk
