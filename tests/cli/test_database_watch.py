"""The database changed under a running ``feral serve`` or resident (node/serve/database_watch.py).

Real processes: the ``-wal`` file deleted under a serve, an old copy of ``feral.db`` written over
the live one in place (as ``cp`` does, keeping the inode) under a resident, and the file moved
away and another put at its path. Each process must stop with one line naming what happened,
and no command may be handed to it after.
"""

from __future__ import annotations

import os
import shutil

import pytest

from feral.node.home.resident_runtime import live_resident
from feral.node.home.serve_runtime import RUNTIME_FILE, live_serve_runtime, process_alive

from .servers import FeralNode, wait_until
from .test_resident import _device, _log, _resident, _stop_resident, mesh
from .test_serve_handoff import FACTS, _handed_over

__all__ = ["mesh"]

STOP_S = 30.0
"""Far above the watch's interval (a fraction of a second): only a process that never notices
fails it."""


def _stopped(node: FeralNode) -> int | None:
    assert node.process is not None
    return node.process.poll()


def test_a_serve_whose_wal_is_deleted_stops_with_one_line(mesh):
    (node,) = mesh.add("device")
    mesh.start(node)
    assert _handed_over(node, "memory", "remember", FACTS[0])
    wal = node.home / "feral.db-wal"
    assert wal.exists()
    wal.unlink()
    assert wait_until(lambda: _stopped(node) is not None, STOP_S), "the serve never noticed"
    assert node.process is not None and node.process.returncode == 1
    said = [line for line in node.serve_log().splitlines() if "feral.db-wal" in line]
    assert len(said) == 1 and "deleted" in said[0], node.serve_log()
    assert not (node.home / RUNTIME_FILE).exists()
    assert live_serve_runtime(node.home) is None


def test_a_serve_whose_database_is_moved_away_and_replaced_stops(mesh):
    (node,) = mesh.add("device")
    node.cli("memory", "remember", FACTS[0])
    shutil.copyfile(node.database, node.home / "other.db")
    mesh.start(node)
    os.replace(node.home / "other.db", node.database)
    assert wait_until(lambda: _stopped(node) is not None, STOP_S), "the serve never noticed"
    assert "was replaced by another file" in node.serve_log()


@pytest.mark.slow
def test_an_old_copy_written_over_the_database_stops_the_resident(mesh):
    node = _device(mesh)
    node.run("memory", "remember", FACTS[0])
    _resident(node)
    _stop_resident(node.home)  # the last connection closed: everything is in feral.db
    old = node.home.parent / "old.db"
    shutil.copyfile(node.database, old)
    node.run("memory", "remember", FACTS[1])  # alone: its close checkpoints into feral.db
    runtime = _resident(node)
    assert _handed_over(node, "memory", "remember", FACTS[2])
    before = os.stat(node.database).st_ino
    shutil.copyfile(old, node.database)  # cp: the same inode, other contents
    assert os.stat(node.database).st_ino == before
    assert wait_until(lambda: "written over" in _log(node), STOP_S), _log(node)
    assert live_resident(node.home) is None or live_resident(node.home) != runtime
    assert "feral.db was written over by another program" in _log(node)
    assert wait_until(lambda: not process_alive(runtime.pid), STOP_S)
    assert node.database.read_bytes() == old.read_bytes(), "it wrote into the copy as it closed"


@pytest.mark.slow
def test_checkpoints_of_big_imports_beside_a_serve_do_not_stop_it(mesh):
    """SQLite's own checkpoints write feral.db too, from this serve and from other processes:
    none of them may be taken for another program's write."""
    (node,) = mesh.add("device")
    mesh.start(node)
    lines = mesh.root / "notes.txt"
    for batch in range(3):
        text = "".join(f"note {batch}-{n}: " + "words " * 60 + "\n" for n in range(1_500))
        lines.write_text(text, encoding="utf-8")
        node.run("memory", "import", str(lines))  # thousands of pages: checkpoints on the way
        assert _handed_over(node, "memory", "remember", f"after import {batch}")
        assert node.serving, node.serve_log()
    assert node.query("PRAGMA wal_checkpoint(PASSIVE)")[0][0] == 0
    assert _handed_over(node, "memory", "remember", "after a checkpoint from outside")
    assert node.serving and "written over" not in node.serve_log(), node.serve_log()
