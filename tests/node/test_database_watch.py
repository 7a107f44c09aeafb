"""node/serve/database_watch.py on a real database: the store a serve or resident holds refuses the
next write once its file changed, before the periodic watch has looked."""

from __future__ import annotations

import os
import shutil

import pytest

from feral.node.node import Node
from feral.node.serve.database_watch import watch_database
from feral.storage.db.errors import StorageError


async def _facts(node: Node) -> int:
    return int(
        await node.store.read(lambda c: c.execute("SELECT count(*) FROM facts").fetchone()[0])
    )


async def test_a_write_after_the_file_was_written_over_is_refused_at_once(node: Node, tmp_path):
    await node.absorb("I live in Porto")
    watch = watch_database(node.store.path, writable=True)
    assert watch is not None and watch.problem() is None
    node.store.write_check = watch.problem
    await node.absorb("my doctor is Dr. Chen")  # its own writes are fine
    copy = tmp_path / "copy.db"
    shutil.copyfile(node.store.path, copy)
    inode = os.stat(node.store.path).st_ino
    shutil.copyfile(copy, node.store.path)  # as cp does: the same inode
    assert os.stat(node.store.path).st_ino == inode
    with pytest.raises(StorageError, match="written over by another program"):
        await node.absorb("backups run at 2am")
    with pytest.raises(StorageError, match="written over"):
        await node.absorb("and nothing after")
    assert watch.problem() is not None, "the problem stays found"


async def test_a_deleted_wal_is_found_and_its_own_checkpoints_are_not(node: Node):
    watch = watch_database(node.store.path, writable=True)
    assert watch is not None
    for n in range(30):
        await node.absorb(f"note number {n} " + "words " * 200)
        await node.store.read(lambda c: c.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall())
        assert watch.problem() is None
    assert await _facts(node) >= 30
    os.unlink(f"{node.store.path}-wal")
    assert "write-ahead log" in (watch.problem() or "")


def test_nothing_is_watched_on_a_database_opened_only_for_reading(tmp_path):
    assert watch_database(tmp_path / "feral.db", writable=False) is None
    assert watch_database(tmp_path / "missing.db", writable=True) is None
