"""``remember`` and ``search`` handed to a running ``feral serve`` (cli/serve_handoff.py).

Real processes throughout: two homes that hold the same node and the same facts (one a copy
of the other), a real ``feral serve`` on one of them, and the same commands run as processes
on both. What a user sees must not depend on whether a server ran: the same stdout, stderr
and exit status, once the stamps and timings that differ between any two runs are set aside.
Whether a command was handed over is read from ``python -X importtime``: a command handed to
the server never imports the node.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from typing import Any

import pytest
import sqlean

from feral.node.api import API_TOKEN_FILE
from feral.node.embedding import serving_lock
from feral.node.home.serve_runtime import RUNTIME_FILE, live_serve_runtime
from feral.storage.encoders.model_stamps import STAMPS_FILE

from .servers import CLI_TIMEOUT_S, FeralNode, Mesh, free_port, pair, wait_until

STAMPS = {"hlc", "created_at", "updated_at", "query_time_ms", "last_access", "last_accessed"}
"""Keys whose values are moments or durations: they differ between any two runs."""
FACTS = [
    "I live in Porto",
    "my doctor is Dr. Chen",
    "the car is due for service in May",
    "I like green tea in the morning",
    "backups run at 2am",
]
SECRET = "my pin is 4821"
CASES: list[tuple[str, ...]] = [
    ("memory", "remember", "I live in Lisbon now"),
    ("memory", "remember", "--json", "buy oat milk on the way home"),
    ("memory", "remember", "--subject", "user", "--predicate", "likes", "--object", "jazz"),
    ("memory", "remember", "I like green tea in the morning"),  # a duplicate
    ("memory", "remember", SECRET),
    ("memory", "remember", "--json", SECRET),
    ("memory", "remember", "--subject", "user"),  # a usage error
    ("memory", "remember", "--scope", "nobody", "hello"),  # a bad scope
    ("memory", "search", "where do I live"),
    ("memory", "search", "--json", "tea"),
    ("memory", "search", "--top-k", "2", "--strategy", "fts", "doctor"),
    ("memory", "search", "--mmr", "--mmr-lambda", "0.5", "--json", "car"),
    ("memory", "search", "--top-k", "0", "tea"),  # a bad option
]


def _masked(value: Any) -> Any:
    """``value`` without its moments, and its floats to 3 places (a score decays with time)."""
    if isinstance(value, dict):
        return {k: "<stamp>" if k in STAMPS else _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    if isinstance(value, float):
        return round(value, 3)
    return value


def _seen(result: subprocess.CompletedProcess[str]) -> tuple[int, Any, str]:
    """What a user sees of one run, moments set aside."""
    try:
        stdout: Any = _masked(json.loads(result.stdout))
    except ValueError:
        stdout = re.sub(r"result\(s\) in [0-9.]+ ms", "result(s) in <t> ms", result.stdout)
    return result.returncode, stdout, result.stderr


def _imports(node: FeralNode, *args: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run ``feral ARGS`` under ``-X importtime``: the run, and the modules it imported."""
    argv = [sys.executable, "-X", "importtime", "-m", "feral.cli", "--home", str(node.home)]
    result = subprocess.run(
        [*argv, *args], capture_output=True, text=True, env=node.environment(),
        timeout=CLI_TIMEOUT_S, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    imported = "\n".join(x for x in result.stderr.splitlines() if x.startswith("import time:"))
    return result, imported


def _handed_over(node: FeralNode, *args: str) -> bool:
    result, imported = _imports(node, *args)
    assert result.returncode == 0, result.stderr
    return "feral.node.node" not in imported


def _twins(mesh: Mesh) -> tuple[FeralNode, FeralNode]:
    """Two homes holding the same node and facts: ``alone`` runs no server, ``served`` will."""
    (alone,) = mesh.add("alone")
    for fact in FACTS:
        alone.cli("memory", "remember", fact)
    served = FeralNode("served", mesh.root / "served", free_port(), mesh.logs, dict(alone.env))
    shutil.copytree(alone.home, served.home)
    served.node_id = alone.node_id
    mesh.nodes.append(served)
    return alone, served


@pytest.mark.slow
def test_remember_and_search_print_the_same_with_and_without_a_running_serve(mesh):
    alone, served = _twins(mesh)
    mesh.start(served)
    assert live_serve_runtime(served.home) is not None
    assert live_serve_runtime(alone.home) is None
    for args in CASES:
        here = _seen(alone.run(*args, check=False))
        there = _seen(served.run(*args, check=False))
        assert there == here, f"feral {' '.join(args)}"
    assert alone.export().count('"table":"facts"') == served.export().count('"table":"facts"')
    assert "4821" not in json.dumps([_seen(served.run("memory", "remember", SECRET, check=False))])
    assert _handed_over(served, "memory", "search", "tea")
    assert _handed_over(served, "memory", "remember", "a note handed to the server")
    assert not _handed_over(alone, "memory", "search", "tea")


@pytest.mark.slow
def test_a_killed_serve_leaves_a_stale_file_and_the_command_works_alone(mesh):
    (node,) = mesh.add("device")
    mesh.start(node)
    assert _handed_over(node, "memory", "remember", "remembered through the server")
    node.kill()
    assert (node.home / RUNTIME_FILE).exists(), "a killed server removes nothing"
    result, imported = _imports(node, "memory", "remember", "remembered alone")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Remembered ")
    assert "feral.node.node" in imported
    assert "remembered alone" in node.export()
    assert (node.home / STAMPS_FILE).exists(), "the model files verified are recorded"
    found = node.run("memory", "search", "remembered", "--json")
    assert json.loads(found.stdout)["total"] >= 1


def _plant_runtime(node: FeralNode, port: int) -> None:
    """A runtime file naming this (live) process and ``port``."""
    runtime = {"pid": os.getpid(), "host": "127.0.0.1", "port": port, "tls": False,
               "token": False}  # fmt: skip
    (node.home / RUNTIME_FILE).write_text(json.dumps(runtime), encoding="utf-8")


@pytest.mark.slow
def test_a_file_whose_home_no_serve_holds_is_stale_and_nothing_is_sent_there(mesh):
    (node,) = mesh.add("device")
    with socket.socket() as stranger:  # another program on the port the file names
        stranger.bind(("127.0.0.1", 0))
        stranger.listen()
        _plant_runtime(node, stranger.getsockname()[1])
        stranger.settimeout(0.5)
        assert not _handed_over(node, "memory", "remember", "not for strangers")
        with pytest.raises(TimeoutError):
            stranger.accept()
    assert "not for strangers" in node.export()


def test_a_file_whose_port_refuses_is_stale_too(mesh):
    (node,) = mesh.add("device")
    _plant_runtime(node, free_port())
    with serving_lock(node.home):  # as a server holds it: only the port says it is gone
        assert not _handed_over(node, "memory", "remember", "nobody listens there")
    assert "nobody listens there" in node.export()


@pytest.mark.slow
def test_a_serve_that_asks_for_the_token_is_handed_the_token(mesh):
    (node,) = mesh.add("device")
    with (mesh.logs / "device.serve.1.log").open("wb") as log:
        node.process = subprocess.Popen(
            node.argv("serve", "--host", "0.0.0.0", "--no-tls", "--port", str(node.port)),
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            env=node.environment(),
        )  # fmt: skip
    node.wait_ready()
    assert (node.home / API_TOKEN_FILE).exists()
    runtime = live_serve_runtime(node.home)
    assert runtime is not None and runtime.token
    assert _handed_over(node, "memory", "remember", "the token travels with me")
    assert "the token travels with me" in node.export()
    node.stop()
    assert not (node.home / RUNTIME_FILE).exists(), "a clean stop removes the file"


def _holds(node: FeralNode, text: str) -> bool:
    conn = sqlean.connect(str(node.database), timeout=5)
    try:
        return conn.execute("SELECT 1 FROM facts WHERE object = ?", (text,)).fetchone() is not None
    finally:
        conn.close()


@pytest.mark.slow
def test_a_remember_handed_to_serve_reaches_a_paired_peer_live(mesh):
    phone, laptop = mesh.add("phone", "laptop")
    pair(phone, laptop, dial=True)
    pair(laptop, phone, dial=False)
    mesh.start(laptop, phone)
    phone.run("memory", "remember", "warm-up from the phone")
    assert wait_until(lambda: _holds(laptop, "warm-up from the phone"), 30), "no link came up"
    assert _handed_over(phone, "memory", "remember", "parked on level 3, row F")
    assert wait_until(lambda: _holds(laptop, "parked on level 3, row F"), 30, interval=0.05)
