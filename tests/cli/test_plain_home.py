"""The home, spoken plainly: ``--home`` after the command, and never a silent new identity.

Issue 15, item 6, first rule. Each case is what a new user tried: a mistyped ``--home`` used to
make a fresh node there and answer as if nothing were wrong.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .helpers import feral_command, feral_process


def run(*args: str, env_home: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``feral ARGS`` as a process, with FERAL_HOME set only when ``env_home`` is given."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "FERAL_HOME"}
    if env_home is not None:
        env["FERAL_HOME"] = str(env_home)
    return subprocess.run(
        [*feral_command(), *args], capture_output=True, text=True, env=env, timeout=120
    )


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, (done.stdout, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def init(home: Path, *args: str) -> str:
    done = run("--home", str(home), "init", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_missing_home_is_an_error_and_nothing_is_created(tmp_path: Path) -> None:
    home = tmp_path / "mistyped"
    for args in (
        ("memory", "remember", "my doctor is Dr. Chen"),
        ("memory", "search", "doctor"),
        ("sync", "node-id"),
        ("sync", "peers"),
        ("sync", "status"),
    ):
        line = one_error_line(run("--home", str(home), *args))
        assert line == f"Error: no feral home at {home}; run `feral init`", args
    assert not home.exists()


def test_an_empty_folder_is_not_a_home(tmp_path: Path) -> None:
    line = one_error_line(run("--home", str(tmp_path), "memory", "stats"))
    assert "no feral home at" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.slow
def test_home_after_the_command_wins_over_the_environment(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    init(first)
    second_id = init(second)
    done = run("sync", "node-id", "--home", str(second), env_home=first)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == second_id
    added = run("memory", "remember", "I live in Porto", "--home", str(second), env_home=first)
    assert added.returncode == 0, added.stderr
    found = run("memory", "search", "Porto", "--json", "--home", str(second), env_home=first)
    assert json.loads(found.stdout)["total"] == 1
    empty = run("memory", "search", "Porto", "--json", env_home=first)
    assert json.loads(empty.stdout)["total"] == 0


def test_home_after_a_group_name(tmp_path: Path) -> None:
    home = tmp_path / "h"
    node_id = init(home)
    done = run("sync", "--home", str(home), "node-id")
    assert done.stdout.strip() == node_id


@pytest.mark.slow
def test_a_lost_key_says_so_and_is_never_replaced(tmp_path: Path) -> None:
    home = tmp_path / "h"
    init(home)
    assert feral_process(home, "memory", "remember", "I live in Porto").returncode == 0
    (home / "node.key").unlink()
    for args in (("memory", "search", "Porto"), ("init",), ("sync", "status")):
        line = one_error_line(run("--home", str(home), *args))
        assert "key" in line and "lost" in line and str(home / "node.key") in line, args
    assert not (home / "node.key").exists()


@pytest.mark.slow
def test_init_says_what_it_made_and_what_it_renamed(tmp_path: Path) -> None:
    home = tmp_path / "h"
    made = run("--home", str(home), "init", "--name", "laptop")
    assert made.returncode == 0
    assert "Created" in made.stderr
    node_id = made.stdout.strip()
    renamed = run("--home", str(home), "init", "--name", "work-laptop")
    assert renamed.stdout.strip() == node_id
    assert renamed.stderr.strip() == 'Renamed this device: "laptop" -> "work-laptop"'
    again = run("--home", str(home), "init", "--json")
    assert json.loads(again.stdout) == {
        "node_id": node_id,
        "home": str(home),
        "name": "work-laptop",
        "created": False,
        "renamed_from": None,
    }
