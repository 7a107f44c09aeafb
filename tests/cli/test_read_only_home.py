"""A home on a read-only filesystem (a backup mounted read-only, a locked-down machine).

Real ``feral`` processes on a tmpfs mounted for the test, filled with a home and then remounted
read-only. Reads must answer, with one line on stderr saying writes are refused; a write must
fail with one line and exit 1; nothing is created. Mounting needs root (or CAP_SYS_ADMIN);
without it the test is skipped and says so.
"""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from .servers import FeralNode, free_port

FACTS = ["I live in Porto", "my doctor is Dr. Chen"]
NOTE = "writes are refused"


def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)


@pytest.fixture
def read_only_home(tmp_path: Path) -> Iterator[FeralNode]:
    """A node whose home holds two facts, on a filesystem then remounted read-only."""
    disk = tmp_path / "disk"
    disk.mkdir()
    try:
        done = _mount("-t", "tmpfs", "-o", "size=64m,mode=0700", "tmpfs", str(disk))
    except FileNotFoundError:
        pytest.skip("no mount command here: cannot make a read-only filesystem")
    if done.returncode != 0:
        pytest.skip(f"a read-only filesystem needs permission to mount: {done.stderr.strip()}")
    try:
        node = FeralNode(
            "device", disk / "home", free_port(), tmp_path, {"FERAL_RESIDENT_IDLE_S": "0"}
        )
        node.node_id = node.cli("init", "--name", "device").strip()
        for fact in FACTS:
            node.run("memory", "remember", fact)
        remounted = _mount("-o", "remount,ro", str(disk))
        assert remounted.returncode == 0, remounted.stderr
        yield node
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True, timeout=30)


def _listing(home: Path) -> list[str]:
    return sorted(p.name for p in home.iterdir())


def _one_note(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and NOTE in lines[0] and "read-only" in lines[0], result.stderr


@pytest.mark.slow
def test_reads_answer_on_a_read_only_home_and_say_writes_are_refused(read_only_home):
    node = read_only_home
    files = _listing(node.home)
    found = node.run("memory", "search", "--json", "doctor", check=False)
    _one_note(found)
    assert any("Dr. Chen" in hit["content"] for hit in json.loads(found.stdout)["results"])
    exported = node.run("memory", "export", check=False)
    _one_note(exported)
    assert exported.stdout.count('"table":"facts"') == len(FACTS)
    assert _listing(node.home) == files


@pytest.mark.slow
def test_a_write_on_a_read_only_home_fails_with_one_line(read_only_home):
    node = read_only_home
    result = node.run("memory", "remember", "my bike is blue", check=False)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), lines
    assert "read-only" in lines[0].lower(), lines


def _post(port: int, path: str, body: dict[str, object]) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"}, method="POST",
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


@pytest.mark.slow
def test_serve_on_a_read_only_home_answers_reads_and_refuses_writes(read_only_home):
    node = read_only_home
    files = _listing(node.home)
    node.start()
    try:
        node.wait_ready()
        status, found = _post(node.port, "/api/memory/search", {"query": "doctor"})
        assert status == 200, found
        assert any("Dr. Chen" in hit["content"] for hit in found["results"])  # type: ignore[attr-defined]
        status, refused = _post(node.port, "/api/memory/remember", {"fact": "my bike is blue"})
        assert status >= 400 and "read-only" in json.dumps(refused), refused
        alone = node.run("memory", "search", "--json", "doctor", check=False)
        _one_note(alone)
    finally:
        node.stop()
    log = node.serve_log()
    assert "serving reads, writes are refused" in log and "Traceback" not in log, log
    assert _listing(node.home) == files
