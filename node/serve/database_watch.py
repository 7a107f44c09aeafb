"""Whether the database a long-running process opened is still the one at its path.

``feral serve`` and the resident keep the home's database open for as long as they run. SQLite
cannot tell when its files change under it: with the ``-wal`` file deleted, every write since
the last checkpoint is gone for the other processes and the next connection starts an empty
log; with another file moved to ``feral.db``, this process goes on writing into a file no one
else reads; with an old copy written over ``feral.db`` in place (``cp old.db feral.db`` keeps
the inode), pages of the old copy and of the log mix, and what the log held is undone or
corrupted at the next checkpoint. :class:`DatabaseWatch` notices each, so the process stops
with one line naming what happened instead of writing on:

- the file's device and inode, taken at start, must stay the same (removed, or replaced);
- the ``-wal`` file must exist (SQLite removes it only when the last connection closes, and
  this process holds one);
- the database file changes (size or time) only when SQLite checkpoints, and a checkpoint
  first raises ``nBackfillAttempted`` in the ``-shm`` file, then writes the database, then
  raises ``nBackfill`` (SQLite's wal.c, ``walCheckpoint``); or the log restarts after one,
  which raises the checkpoint sequence in the ``-wal`` header and draws new salts. A change of
  the database file between two looks that saw the same checkpoint state and no restart,
  neither of them during a checkpoint, was made by something other than SQLite. (The first
  frames written into the empty log this process's connection made are no restart: nothing
  was checkpointed before them, and no connection can be the last to close while this one is
  open.) Each look reads the checkpoint state before and after the database's size and time,
  and is trusted only when both agree.

Only the standard library: a look is three ``stat`` calls and two reads of a few bytes. The
``-shm`` file is opened once and never closed by the watch: closing any descriptor of a file
drops every POSIX lock this process holds on it, SQLite's own among them (SQLite's "how to
corrupt", 2.2), and other processes would then take this one's connection for gone.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NamedTuple

__all__ = ["DatabaseWatch", "watch_database"]

CHECKPOINT_INFO = slice(96, 136)
"""``WalCkptInfo`` in the ``-shm`` file, after the two 48-byte copies of the index header."""
WAL_HEADER_BYTES = 32
"""The ``-wal`` header: magic, version, page size, checkpoint sequence, salts, checksums."""
LOG_MARK = slice(12, 24)
"""The checkpoint sequence and the two salts of the header: what a restart of the log changes."""
FIRST_SEQUENCE = bytes(4)


class _Look(NamedTuple):
    database: tuple[int, int]
    """The database file's size and modification time (ns)."""
    checkpoint: tuple[int, int] | None
    """``nBackfill`` and ``nBackfillAttempted``, or ``None``: unreadable or changing."""
    log_mark: bytes | None
    """:data:`LOG_MARK` of the ``-wal`` header, ``None`` while the log is empty."""


class DatabaseWatch:
    """What a serve or a resident checks of its database between its own reads (see module)."""

    def __init__(self, path: Path) -> None:
        """Take the identity of ``path`` (the database the process just opened)."""
        self.path = path
        self.wal = Path(f"{path}-wal")
        self.shm = Path(f"{path}-shm")
        found = os.stat(path)
        self.identity = (found.st_dev, found.st_ino)
        try:
            self._shm: int | None = os.open(self.shm, os.O_RDONLY)  # kept: see the module
        except OSError:
            self._shm = None
        self._last = self._look()
        self.found: str | None = None

    def problem(self) -> str | None:
        """A sentence naming what happened to the database under this process, or ``None``;
        once found, the same sentence at every later call (the store refuses writes from the
        first, the process stops at its next watch)."""
        if self.found is None:
            self.found = self._problem()
        return self.found

    def _problem(self) -> str | None:
        try:
            found = os.stat(self.path)
        except FileNotFoundError:
            return f"{self.path} was removed"
        except OSError as exc:
            return f"{self.path} cannot be read ({exc.strerror})"
        if (found.st_dev, found.st_ino) != self.identity:
            return f"{self.path} was replaced by another file"
        if not self.wal.exists():
            return f"its write-ahead log {self.wal} was deleted"
        look, last = self._look(), self._last
        self._last = look
        if look.database == last.database or look.checkpoint is None:
            return None
        if look.checkpoint == last.checkpoint and not _restarted(last.log_mark, look.log_mark):
            return f"{self.path} was written over by another program (an older copy?)"
        return None

    def _look(self) -> _Look:
        before = self._checkpoint()
        try:
            found = os.stat(self.path)
            database = (found.st_size, found.st_mtime_ns)
        except OSError:
            database = (-1, -1)
        after = self._checkpoint()
        stable = before is not None and before == after and before[0] == before[1]
        header = _head(self.wal, WAL_HEADER_BYTES)
        mark = header[LOG_MARK] if len(header) == WAL_HEADER_BYTES else None
        return _Look(database, before if stable else None, mark)

    def _checkpoint(self) -> tuple[int, int] | None:
        if self._shm is None:
            return None
        size = CHECKPOINT_INFO.stop - CHECKPOINT_INFO.start
        try:
            info = os.pread(self._shm, size, CHECKPOINT_INFO.start)
        except OSError:
            return None
        if len(info) < size:
            return None
        backfilled = int.from_bytes(info[0:4], sys.byteorder)
        attempted = int.from_bytes(info[32:36], sys.byteorder)
        return backfilled, attempted


def watch_database(path: Path, *, writable: bool) -> DatabaseWatch | None:
    """A watch on the database ``path`` a serve or resident just opened, or ``None`` when there
    is nothing to watch: it was opened only for reading (no ``-wal``), or it is no file."""
    if not writable:
        return None
    try:
        return DatabaseWatch(path)
    except OSError:
        return None


def _restarted(last: bytes | None, now: bytes | None) -> bool:
    """Whether the log may have restarted (after a checkpoint) between two looks."""
    if last is None and now is not None:
        return now[:4] != FIRST_SEQUENCE  # first frames of the empty log: no checkpoint before
    return last != now


def _head(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of ``path`` (fewer, or none, if it is shorter or unreadable);
    only for a file SQLite holds no lock on (the ``-wal``: its locks are on the ``-shm``)."""
    try:
        with path.open("rb") as handle:
            return handle.read(size)
    except OSError:
        return b""
