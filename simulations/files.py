"""Where the simulated devices keep their databases: scratch files copied from one template.

A migrated, empty database is made once per process and copied for each new device, which is
much quicker than migrating each one.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from feral.storage.store import open_sync

__all__ = ["remove_database", "scratch_directory", "template_database"]


def scratch_directory() -> str | None:
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() else None


_TEMPLATE: list[Path] = []


def template_database() -> Path:
    """A migrated, empty database, made once per process and copied for each new node.

    Its epoch row is removed, so ``open_sync`` gives each copy a fresh random epoch, as it
    gives a new database.
    """
    if not _TEMPLATE:
        directory = Path(tempfile.mkdtemp(prefix="feral-sim-", dir=scratch_directory()))
        atexit.register(shutil.rmtree, directory, True)
        path = directory / "template.db"
        conn = open_sync(path, synchronous="NORMAL")
        conn.execute("DELETE FROM meta WHERE key = 'epoch'")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        _TEMPLATE.append(path)
    return _TEMPLATE[0]


def remove_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
