"""The clock's high-water mark kept beside the database, in ``HOME/clock``.

The database holds every stamp this node issued, so it is the mark a restart resumes from. A
database restored from an older copy has lost some of them while its peers still hold them:
resuming from the copy's mark would stamp new writes with stamps already used (two different
writes under one ``(origin, hlc)``: each side keeps its own and both believe they agree), or
between them, where entry counts cannot see the hole (TEST-CATALOG 17). This file outlives
such a restore, so the node resumes above every stamp it ever issued.

It is written inside each write transaction, after the stamps are issued and before the commit,
so writers sharing one home (serialized by SQLite's write lock) leave the highest mark last. It
is not synced to disk: after a power cut the database, which is, still holds the mark; the file
only matters when the database is later replaced by an older copy.
"""

from __future__ import annotations

import os
from pathlib import Path

from feral.sync.errors import HomeFileError

__all__ = ["MARK_FILE", "read_mark", "write_mark"]

MARK_FILE = "clock"


def read_mark(home: Path) -> int:
    """The highest stamp this home's node has issued, or 0 when none is recorded.

    Raises:
        HomeFileError: the file exists but does not hold a stamp; the message names it.
    """
    path = home / MARK_FILE
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return 0
    except (OSError, UnicodeDecodeError) as exc:
        raise HomeFileError(f"{path}: cannot read the clock mark: {exc}") from exc
    if not text:
        return 0  # cut short by a power cut: the database holds the mark
    if not text.isdigit() or len(text) > 20:
        raise HomeFileError(
            f"{path}: not a clock mark ({text[:40]!r}); if the database was not restored from "
            "an older copy, delete the file and the node resumes from the database"
        )
    return int(text)


def write_mark(home: Path, mark: int) -> None:
    """Record ``mark`` as the highest stamp issued.

    Written in place at a fixed width, in one small write: no temporary file is left behind
    when the process is killed, and a reader sees the old number or the new one (writers are
    serialized by the database's write lock).
    """
    path = home / MARK_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.pwrite(fd, f"{mark:020d}\n".encode("ascii"), 0)
        finally:
            os.close(fd)
    except OSError as exc:
        raise HomeFileError(f"{path}: cannot write the clock mark: {exc.strerror}") from exc
