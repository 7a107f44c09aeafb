"""The resident node (cli/resident.py, node/serve/resident.py): started by a command that worked
alone, answering the next ones, and gone when it should be.

Real processes throughout, mixed as a user mixes them: commands one after the other and side by
side, a ``feral serve`` started while a resident runs, another process importing and nuking,
settings edited by hand, a resident killed with SIGKILL, a home removed. Whether a command was
handed over is read from ``python -X importtime`` (test_serve_handoff.py): a command handed to
a resident never imports the node. Every resident a test starts is stopped when it ends.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from feral.node.home.resident_runtime import (
    IDLE_ENV,
    RESIDENT_FILE,
    ResidentRuntime,
    live_resident,
    resident_held,
)
from feral.node.home.serve_runtime import process_alive
from feral.node.settings.config import load_settings, save_settings

from .helpers import holds_digits
from .servers import CLI_TIMEOUT_S, FeralNode, Mesh, free_port, pair, wait_until
from .test_serve_handoff import CASES, FACTS, _handed_over, _imports, _seen

READY_S = 60.0
"""A resident loads the node and the model before it writes its file: seconds on a busy CI."""


@pytest.fixture
def mesh(tmp_path: Path) -> Iterator[Mesh]:
    """Devices whose residents (and servers) are all stopped on the way out."""
    with Mesh(tmp_path) as nodes:
        try:
            yield nodes
        finally:
            for node in nodes.nodes:
                _stop_resident(node.home)


def _stop_resident(home: Path) -> None:
    """SIGTERM whatever resident ``home``'s file names, and wait until its lock is free (one
    still starting writes its file a moment later: it is stopped once it has)."""
    signalled: set[int] = set()

    def stopped() -> bool:
        pid = _named_pid(home)
        if pid is not None and pid not in signalled and process_alive(pid):
            os.kill(pid, signal.SIGTERM)
            signalled.add(pid)
        return not resident_held(home)

    assert wait_until(stopped, 90), f"a resident holds {home} still"


def _named_pid(home: Path) -> int | None:
    """The process id ``home``'s resident file names, if there is one."""
    try:
        pid = json.loads((home / RESIDENT_FILE).read_text())["pid"]
    except (OSError, ValueError, KeyError):
        return None
    return pid if isinstance(pid, int) else None


def _device(mesh: Mesh, name: str = "device", idle_s: float = 120) -> FeralNode:
    (node,) = mesh.add(name, env={name: {IDLE_ENV: str(idle_s)}})
    return node


def _resident(node: FeralNode) -> ResidentRuntime:
    runtime = wait_until(lambda: live_resident(node.home), READY_S, interval=0.05)
    assert runtime is not None, f"no resident: {_log(node)}"
    return runtime


def _log(node: FeralNode) -> str:
    path = node.home / "resident.log"
    return path.read_text() if path.exists() else "(no resident.log)"


def _gone(runtime: ResidentRuntime, node: FeralNode) -> bool:
    """The resident ``runtime`` ended and its file with it (a command working alone since may
    have started the next one, which writes a file of its own)."""
    return not process_alive(runtime.pid) and _named_pid(node.home) != runtime.pid


@pytest.mark.slow
def test_a_command_alone_starts_a_resident_and_the_next_ones_are_handed_to_it(mesh):
    node = _device(mesh)
    assert live_resident(node.home) is None
    result, imported = _imports(node, "memory", "remember", FACTS[0])
    assert result.returncode == 0, result.stderr
    assert "feral.node.node" in imported, "the first command works alone"
    runtime = _resident(node)
    assert (node.home / RESIDENT_FILE).stat().st_mode & 0o777 == 0o600
    assert _handed_over(node, "memory", "remember", FACTS[1])
    assert _handed_over(node, "memory", "search", "where do I live")
    found = json.loads(node.run("memory", "search", "--json", "doctor").stdout)
    assert any("Chen" in hit["content"] for hit in found["results"])
    assert live_resident(node.home) == runtime, "the same resident answers every command"
    assert "Dr. Chen" in node.export()


@pytest.mark.slow
def test_a_resident_answers_exactly_as_the_command_alone(mesh):
    alone = _device(mesh, "alone", idle_s=0)
    for fact in FACTS:
        alone.cli("memory", "remember", fact)
    helped = FeralNode("helped", mesh.root / "helped", free_port(), mesh.logs,
                       {IDLE_ENV: "120"})  # fmt: skip
    shutil.copytree(alone.home, helped.home)
    mesh.nodes.append(helped)
    helped.run("memory", "search", "warm up")  # alone, and starts the resident
    _resident(helped)
    for args in CASES:
        here = _seen(alone.run(*args, check=False))
        there = _seen(helped.run(*args, check=False))
        assert there == here, f"feral {' '.join(args)}"
    assert live_resident(alone.home) is None and not resident_held(alone.home)
    assert "4821" not in json.dumps(_seen(helped.run("memory", "remember", "my pin is 4821",
                                                     check=False)))  # fmt: skip
    assert not holds_digits(_log(helped), "4821")


@pytest.mark.slow
def test_an_idle_resident_stops_by_itself_and_removes_its_file(mesh):
    node = _device(mesh, idle_s=1)
    node.run("memory", "remember", FACTS[0])
    runtime = _resident(node)
    assert wait_until(lambda: _gone(runtime, node), 30), _log(node)
    assert "stopped: idle for 1 s" in _log(node)
    assert not resident_held(node.home)
    assert not _handed_over(node, "memory", "search", "Porto"), "alone again, and starts one"
    _resident(node)


@pytest.mark.slow
def test_a_serve_started_beside_a_resident_takes_over(mesh):
    node = _device(mesh)
    node.run("memory", "remember", FACTS[0])
    runtime = _resident(node)
    mesh.start(node)  # the serve is not refused: a resident holds no serve lock
    assert wait_until(lambda: _gone(runtime, node), 30), _log(node)
    assert "stopped: a feral serve runs on the home" in _log(node)
    assert _handed_over(node, "memory", "remember", FACTS[1]), "now the serve answers"
    assert not resident_held(node.home), "a command handed to a serve starts no resident"
    node.stop()
    assert not _handed_over(node, "memory", "remember", FACTS[2]), "no serve: alone, once"
    assert _resident(node).pid != runtime.pid
    assert _handed_over(node, "memory", "remember", FACTS[3]), "then to the new resident"


@pytest.mark.slow
def test_a_killed_resident_leaves_a_stale_file_and_the_next_command_works_alone(mesh):
    node = _device(mesh)
    node.run("memory", "remember", FACTS[0])
    runtime = _resident(node)
    os.kill(runtime.pid, signal.SIGKILL)
    assert wait_until(lambda: not process_alive(runtime.pid), 10)
    assert (node.home / RESIDENT_FILE).exists(), "a killed resident removes nothing"
    result, imported = _imports(node, "memory", "remember", "remembered after the kill")
    assert result.returncode == 0 and result.stdout.startswith("Remembered "), result.stderr
    assert "feral.node.node" in imported
    assert "remembered after the kill" in node.export()
    assert _resident(node).pid != runtime.pid, "a new resident replaced it"


@pytest.mark.slow
def test_settings_edited_by_hand_are_in_force_at_once_and_the_resident_stops(mesh):
    node = _device(mesh)
    node.run("memory", "remember", FACTS[0])
    runtime = _resident(node)
    node.run("memory", "remember", FACTS[1])
    query = ("memory", "search", "--json", "--strategy", "fts", "Porto OR Chen")
    assert len(json.loads(node.run(*query).stdout)["results"]) == 2
    settings = load_settings(node.home)  # as a user edits the file: top_k 5 -> 1
    save_settings(node.home, replace(settings, search=replace(settings.search, top_k=1)))
    assert live_resident(node.home) is None, "no command asks a resident that read the old"
    assert len(json.loads(node.run(*query).stdout)["results"]) == 1, "the new top_k, at once"
    assert wait_until(lambda: _gone(runtime, node), 30), _log(node)
    assert "stopped: the home changed" in _log(node)


@pytest.mark.slow
def test_another_process_imports_and_nukes_and_the_resident_answers_what_is_stored(mesh):
    node = _device(mesh)
    node.run("memory", "remember", FACTS[0])
    _resident(node)
    notes = mesh.root / "notes.txt"
    notes.write_text("the spare key hangs behind the boiler\nthe cat is fed at seven\n")
    node.run("memory", "import", str(notes))  # its own process, which embeds what it wrote
    assert _handed_over(node, "memory", "search", "where is the extra key kept")
    found = json.loads(node.run("memory", "search", "--json", "--strategy", "vector",
                                "where is the extra key kept").stdout)  # fmt: skip
    top = found["results"][0]
    assert "boiler" in top["content"], found
    node.run("memory", "nuke", top["id"], "--yes")
    found = json.loads(node.run("memory", "search", "--json", "boiler").stdout)
    assert all("boiler" not in hit["content"] for hit in found["results"]), found
    assert _handed_over(node, "memory", "search", "boiler")


@pytest.mark.slow
def test_commands_side_by_side_start_one_resident(mesh):
    node = _device(mesh)
    procs = [subprocess.Popen(node.argv("memory", "remember", fact), env=node.environment(),
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for fact in FACTS[:3]]  # fmt: skip
    for proc in procs:
        out, err = proc.communicate(timeout=CLI_TIMEOUT_S)
        assert proc.returncode == 0, err
    runtime = _resident(node)
    assert wait_until(lambda: _log(node).count("answering on") >= 1, 10)
    assert _log(node).count("answering on") == 1, _log(node)
    assert live_resident(node.home) == runtime
    assert node.count() == 3


@pytest.mark.slow
def test_the_setting_starts_a_resident_by_default_and_zero_starts_none(mesh):
    node = _device(mesh)
    env = {k: v for k, v in node.environment().items() if k != IDLE_ENV}
    run = [sys.executable, "-m", "feral.cli", "--home", str(node.home), "memory", "search", "x"]
    subprocess.run(run, env=env, check=True, capture_output=True, timeout=CLI_TIMEOUT_S)
    _resident(node)
    assert "stops after 600 s idle" in _log(node)
    _stop_resident(node.home)
    settings = load_settings(node.home)
    save_settings(node.home, replace(settings, cli=replace(settings.cli, resident_idle_s=0)))
    subprocess.run(run, env=env, check=True, capture_output=True, timeout=CLI_TIMEOUT_S)
    assert not wait_until(lambda: resident_held(node.home), 3), "none with the setting at 0"


@pytest.mark.parametrize("value", ["soon", "-1", "90000", "nan"])
def test_a_bad_idle_time_is_one_line_and_nothing_is_written(mesh, value):
    node = _device(mesh, idle_s=0)
    node.env[IDLE_ENV] = value
    result = node.run("memory", "remember", "never written", check=False)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and IDLE_ENV in result.stderr, result.stderr
    assert "never written" not in node.export()


@pytest.mark.slow
def test_the_resident_answers_its_token_only_on_loopback_and_only_two_routes(mesh):
    node = _device(mesh)
    node.run("memory", "remember", FACTS[0])
    runtime = _resident(node)
    url = f"http://127.0.0.1:{runtime.port}"
    body = json.dumps({"query": "Porto"}).encode()

    def status(path: str, headers: dict[str, str]) -> int:
        request = urllib.request.Request(url + path, data=body, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return int(answer.status)
        except urllib.error.HTTPError as exc:
            return exc.code

    plain = {"Content-Type": "application/json"}
    token = {**plain, "Authorization": f"Bearer {runtime.token}"}
    assert status("/api/memory/search", token) == 200
    assert status("/api/memory/search", plain) == 401
    assert status("/api/memory/search", {**plain, "Authorization": "Bearer wrong-token"}) == 401
    assert status("/api/memory/search", {**token, "Host": "evil.example"}) == 403
    assert status("/api/memory/search", {**token, "Origin": "http://evil.example"}) == 403
    assert status("/api/memory/stats", token) == 404
    assert status("/api/graph", token) == 404


@pytest.mark.slow
def test_a_resident_whose_home_is_removed_stops_and_makes_nothing(mesh):
    node = _device(mesh)
    node.run("memory", "remember", FACTS[0])
    runtime = _resident(node)
    shutil.rmtree(node.home)
    assert wait_until(lambda: not process_alive(runtime.pid), 30)
    assert not node.home.exists(), "the resident made no home where it was removed"


@pytest.mark.slow
def test_what_the_resident_remembered_reaches_a_peer_at_the_next_sync_now(mesh):
    phone = _device(mesh, "phone")
    (laptop,) = mesh.add("laptop")
    pair(phone, laptop, dial=True)
    pair(laptop, phone, dial=False)
    mesh.start(laptop)
    phone.run("memory", "remember", FACTS[0])  # alone: starts the phone's resident
    runtime = _resident(phone)
    assert _handed_over(phone, "memory", "remember", "parked on level 3, row F")
    assert "parked on level 3, row F" not in laptop.export(), "the resident dials no peer"
    phone.run("sync", "now")  # its own process, beside the resident
    assert "parked on level 3, row F" in laptop.export()
    assert live_resident(phone.home) == runtime, "a sync round leaves the resident be"
    assert _handed_over(phone, "memory", "search", "where is the car parked")
