"""Real ``feral`` processes, started as a user's shell would start them."""

from __future__ import annotations

import json
import subprocess

import pytest

from feral.storage.encoders.embedders import STATIC_EMBEDDER

from .helpers import feral_command, feral_process, set_embedder


@pytest.mark.slow
def test_demo_runs_to_the_end():
    result = subprocess.run([*feral_command(), "demo"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    exports = result.stdout.split("(the convergence oracle):\n")[1].splitlines()[:4]
    # Five rows on each device (the two birthdays are one fact), under one digest.
    devices = [line.split() for line in exports[:3]]
    assert [d[:3] for d in devices] == [[n, "5", "rows"] for n in ("laptop", "phone", "server")]
    assert len({d[4] for d in devices}) == 1
    assert exports[3].split() == ["identical:", "yes"]
    # The phone archived and then restored Dr. Chen after the laptop archived it: live wins.
    assert "Dr. Chen on the laptop is live: " in result.stdout
    by_meaning = result.stdout.split("'vacation travel plans'")[1]
    assert by_meaning.splitlines()[3].split()[1:3] == ["episodic", "Planned"]


@pytest.mark.slow
def test_two_processes_writing_to_one_home_both_succeed_with_ordered_stamps(tmp_path):
    home = tmp_path / "home"
    assert feral_process(home, "init").returncode == 0
    # About stamps, not recall: the light model keeps each process's embedding (which runs
    # inside its write transactions) short, so seven processes on a busy machine never wait
    # out busy_timeout behind one another.
    set_embedder(home, STATIC_EMBEDDER)
    sources = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.txt"
        path.write_text("".join(f"fact {name} {i}\n" for i in range(300)), encoding="utf-8")
        sources.append(path)
    env_cmd = [*feral_command(), "--home", str(home), "memory", "import"]
    procs = [subprocess.Popen([*env_cmd, str(p)], stderr=subprocess.PIPE) for p in sources]
    singles = [feral_process(home, "memory", "remember", f"single write {i}") for i in range(5)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert all(s.returncode == 0 for s in singles)
    exported = feral_process(home, "memory", "export")
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    # 605 facts; remember may add edges (related_to) beside them, each a row of its own
    assert len([row for row in rows if row["table"] == "facts"]) == 605
    stamps = [row["hlc"] for row in rows]
    assert len(set(stamps)) == len(stamps)


@pytest.mark.slow
def test_a_corrupt_database_is_refused_with_one_line(tmp_path):
    home = tmp_path / "home"
    assert feral_process(home, "init").returncode == 0
    assert feral_process(home, "memory", "remember", "hello").returncode == 0
    (home / "feral.db").write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (home / f"feral.db{suffix}").unlink(missing_ok=True)
    result = feral_process(home, "memory", "stats")
    assert result.returncode == 1
    assert result.stderr.startswith("Error: ")
    assert len(result.stderr.strip().splitlines()) == 1
