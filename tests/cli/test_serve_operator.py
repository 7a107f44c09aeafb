"""``feral serve`` as an operator runs it: refusals before anything is made, a clean stop, a log
that names peers (issue 13, item 3). Real processes on loopback."""

from __future__ import annotations

import re
import signal
import socket
import subprocess

import pytest

from .servers import FeralNode, Mesh, free_port, pair, wait_until

STOP_S = 20.0


def serve_once(node: FeralNode, *args: str) -> subprocess.CompletedProcess[str]:
    """``feral serve ARGS`` that is expected to stop by itself (refused)."""
    return node.run("serve", *args, check=False)


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: "), lines[0]
    assert "Traceback" not in result.stderr
    return lines[0]


def fresh_node(mesh: Mesh, name: str) -> FeralNode:
    """A node just made by ``feral init`` (a refused serve may add nothing to its home: no
    database, no certificate, no token)."""
    node = FeralNode(name, mesh.root / name, free_port(), mesh.logs)
    node.run("init")
    return node


def home_files(node: FeralNode) -> list[str]:
    return sorted(p.name for p in node.home.iterdir())


@pytest.mark.slow
def test_a_port_in_use_is_one_line_and_creates_nothing(mesh):
    node = fresh_node(mesh, "fresh")
    with socket.socket() as holder:
        holder.bind(("0.0.0.0", node.port))
        holder.listen()
        before = home_files(node)
        error = one_error_line(serve_once(node, "--host", "0.0.0.0", "--port", str(node.port)))
    assert str(node.port) in error and "in use" in error, error
    assert home_files(node) == before


def test_a_bad_host_is_one_line_and_creates_nothing(mesh):
    node = fresh_node(mesh, "fresh")
    before = home_files(node)
    error = one_error_line(serve_once(node, "--host", "no-such-host.invalid", "--port", "9"))
    assert "no-such-host.invalid" in error, error
    assert home_files(node) == before


@pytest.mark.slow
def test_a_second_serve_on_one_home_is_refused_and_the_first_carries_on(mesh):
    (node,) = mesh.add("solo")
    mesh.start(node)
    before = sorted(p.name for p in node.home.iterdir())
    error = one_error_line(serve_once(node, "--host", "0.0.0.0", "--port", str(free_port())))
    assert "already" in error and "serve" in error, error
    assert sorted(p.name for p in node.home.iterdir()) == before  # no api_token either
    assert node.serving
    node.cli("memory", "remember", "still here")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.slow
def test_a_signal_stops_serve_with_exit_0_after_closing_its_links(mesh, sig):
    server, laptop = mesh.add("server", "laptop")
    pair(server, laptop, dial=False)
    pair(laptop, server, dial=True)
    mesh.start(server, laptop)
    assert wait_until(lambda: "authenticated" in server.serve_log(), STOP_S), server.serve_log()

    assert server.process is not None
    server.process.send_signal(sig)
    assert server.process.wait(timeout=STOP_S) == 0, server.serve_log()
    log = server.serve_log()
    assert "Aborted" not in log and "Traceback" not in log, log
    assert re.search(rf"= link with {laptop.node_id} \(laptop\).* closed", log), log
    closed = wait_until(lambda: f"link with {server.node_id} (server)" in laptop.serve_log(), 20)
    assert closed, laptop.serve_log()


@pytest.mark.slow
def test_connects_disconnects_and_refusals_are_one_line_each_with_names(mesh):
    server, friend, stranger = mesh.add("server", "friend", "stranger")
    pair(server, friend, dial=False)
    for node in (friend, stranger):
        pair(node, server, dial=True)
    mesh.start(server)
    friend.run("sync", "now")
    stranger.run("sync", "now", check=False)
    with socket.create_connection(("127.0.0.1", server.port)) as raw:
        raw.sendall(b"GET /sync HTTP/1.1\r\nHost: x\r\n\x1b[31mX-Evil: \x07\r\n\r\n")
        raw.recv(1000)
    every_line = ("(friend) from 127.0.0.1", "closed", "(stranger)", "Invalid HTTP request")
    logged = wait_until(lambda: all(line in server.serve_log() for line in every_line), 20)
    assert logged, server.serve_log()

    log = server.serve_log()
    assert "None" not in log, log
    assert re.search(rf"= authenticated {friend.node_id} \(friend\)", log), log
    assert re.search(rf"= link with {friend.node_id} \(friend\) from 127\.0\.0\.1:\d+ closed", log)
    refused = [line for line in log.splitlines() if "refused" in line]
    assert any(stranger.node_id in line and "stranger" in line for line in refused), log
    assert "\x1b" not in log and "\x07" not in log
