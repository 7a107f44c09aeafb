"""Local robustness of ``feral serve`` and the resident on one machine (issue 23, item 8).

Real processes throughout: a program that takes the port a stopping server freed, a server
stopped by SIGTERM while something polls its port, and HTTP requests whose body never arrives.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from feral.node.api import API_TOKEN_FILE
from feral.node.embedding import serving_lock
from feral.node.home.resident_runtime import (
    RESIDENT_FILE,
    ResidentRuntime,
    code_mark,
    home_mark,
    live_resident,
    resident_lock,
)
from feral.node.home.serve_runtime import RUNTIME_FILE

from .servers import FeralNode, wait_until
from .test_link_limits_processes import live_delay, server_and_laptop, set_sync

TOKEN = "t" * 43
"""A token in the home's ``api_token``: it must never reach a program that is not the serve."""
SLOW_BODIES = 300
BODY_DEADLINE_S = 2.0


class Stranger:
    """Another program listening on 127.0.0.1: it answers every request it reads with a
    200 and a JSON body, as a server would, and keeps every byte it was sent."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.1)
        self.port = int(self.sock.getsockname()[1])
        self.received = bytearray()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2.0)
                try:
                    while chunk := conn.recv(65536):
                        self.received += chunk
                        body = b'{"proof": "00", "results": [], "total": 0, "id": "x"}'
                        head = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body)
                        conn.sendall(head + body)
                except OSError:
                    pass

    @contextmanager
    def running(self) -> Iterator[Stranger]:
        self._thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            self._thread.join(timeout=10)
            self.sock.close()


@pytest.mark.slow
def test_a_program_on_the_port_a_serve_file_names_gets_neither_the_fact_nor_the_token(mesh):
    """The moment after a stopping serve freed its port, as another program takes it: the file
    still names the port, the serve still holds its lock. The command must find out it is not
    talking to the serve before it sends anything of the user's."""
    (node,) = mesh.add("device")
    (node.home / API_TOKEN_FILE).write_text(TOKEN + "\n", encoding="ascii")
    (node.home / API_TOKEN_FILE).chmod(0o600)
    with Stranger().running() as stranger, serving_lock(node.home):
        runtime = {"pid": os.getpid(), "host": "127.0.0.1", "port": stranger.port, "tls": False,
                   "token": True, "nonce": "n" * 32}  # fmt: skip
        (node.home / RUNTIME_FILE).write_text(json.dumps(runtime), encoding="utf-8")
        result = node.run("memory", "remember", "the spare key is under the blue pot", check=False)
    assert b"blue pot" not in stranger.received
    assert TOKEN.encode() not in stranger.received
    assert result.stdout.startswith("Remembered "), result.stdout + result.stderr
    assert "the spare key is under the blue pot" in node.export()


@pytest.mark.slow
def test_a_program_on_the_port_a_resident_file_names_gets_neither_the_fact_nor_the_token(mesh):
    (node,) = mesh.add("device")
    with Stranger().running() as stranger, resident_lock(node.home) as mine:
        assert mine
        runtime = ResidentRuntime(os.getpid(), stranger.port, TOKEN, code_mark(),
                                  home_mark(node.home))  # fmt: skip
        (node.home / RESIDENT_FILE).write_text(json.dumps(runtime._asdict()), encoding="utf-8")
        assert live_resident(node.home) is not None
        result = node.run(
            "memory", "remember", "the bike lock code is written on the shed", check=False
        )
    assert b"shed" not in stranger.received and TOKEN.encode() not in stranger.received
    assert result.returncode == 0, result.stderr
    assert "the bike lock code is written on the shed" in node.export()


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def test_a_serve_stopped_by_sigterm_removes_its_file_before_it_frees_the_port(mesh):
    (node,) = mesh.add("device")
    mesh.start(node)
    assert (node.home / RUNTIME_FILE).exists()
    assert node.process is not None
    node.process.send_signal(signal.SIGTERM)
    while _accepts(node.port):  # until the port is free: then the file must be gone already
        pass
    assert not (node.home / RUNTIME_FILE).exists(), "the port was free while the file named it"
    node.process.wait(timeout=30)
    assert node.process.returncode == 0


class SlowBodies:
    """``count`` requests to ``port`` whose head arrives whole and whose body never does."""

    def __init__(self, port: int, count: int) -> None:
        self.selector = selectors.DefaultSelector()
        self.answers: dict[socket.socket, bytearray] = {}
        self.closed = 0
        head = (f"POST /api/memory/remember HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"fa")  # fmt: skip
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(head.encode())
            sock.setblocking(False)
            self.selector.register(sock, selectors.EVENT_READ)
            self.answers[sock] = bytearray()

    def poll(self) -> bool:
        """Read what the server sent; ``True`` once it has closed every connection."""
        for key, _ in self.selector.select(0.05):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            if data:
                self.answers[sock] += data
            else:
                self.selector.unregister(sock)
                self.closed += 1
        return self.closed == len(self.answers)

    def close(self) -> None:
        for sock in self.answers:
            sock.close()
        self.selector.close()


@pytest.mark.slow
def test_requests_whose_body_never_arrives_are_answered_408_and_peers_sync_meanwhile(mesh):
    server, laptop = server_and_laptop(mesh)
    set_sync(server, handshake_timeout_s=BODY_DEADLINE_S)
    mesh.start(server, laptop)
    live_delay(laptop, server, "before the slow bodies")
    slow = SlowBodies(server.port, SLOW_BODIES)
    try:
        started = time.monotonic()
        delays = [live_delay(laptop, server, "while the bodies hang"),
                  live_delay(server, laptop, "back while they hang")]  # fmt: skip
        assert wait_until(slow.poll, 30, interval=0), f"{slow.closed} of {SLOW_BODIES} closed"
        took = time.monotonic() - started
        answers = [bytes(a) for a in slow.answers.values()]
    finally:
        slow.close()
    print(f"\n{SLOW_BODIES} slow bodies closed within {took:.1f} s; sync delays {delays}")
    assert all(a.startswith(b"HTTP/1.1 408 ") for a in answers), {a[:40] for a in answers}
    assert took >= BODY_DEADLINE_S
    assert "no request body within" in server.serve_log()
    _still_serves(server)


def _still_serves(node: FeralNode) -> None:
    found = node.run("memory", "search", "slow bodies", "--json")
    assert json.loads(found.stdout)["total"] >= 1
    assert node.serving


@pytest.mark.slow
def test_a_kept_alive_connection_whose_next_request_head_never_ends_is_closed(mesh):
    (server,) = mesh.add("server")
    set_sync(server, handshake_timeout_s=BODY_DEADLINE_S)
    mesh.start(server)
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(f"GET /api/handoff/proof HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                     "x-feral-challenge: 00\r\n\r\n".encode())  # fmt: skip
        answer = b""
        while not answer.endswith(b"}"):  # the head and the JSON body of the answer
            answer += sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200 "), answer
        sock.sendall(b"GET /api/memory/episodes HTTP/1.1\r\nHost: 127.0.0.1")  # and no more
        started = time.monotonic()
        assert sock.recv(65536) == b"", "the server answered a head that never ended"
        took = time.monotonic() - started
    assert BODY_DEADLINE_S <= took < BODY_DEADLINE_S + 10, took
    assert "no request within" in server.serve_log()
