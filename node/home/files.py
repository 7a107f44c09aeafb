"""Files in the node's home written whole and private: the one atomic-write helper.

Settings, the API token and wiki pages are replaced with :func:`write_private_file` (or, where the
caller words its own error, :func:`replace_private_file`): the data goes to a new file beside the
target, created ``O_EXCL`` with mode 0600 and ``fchmod``-ed to 0600 whatever the umask did, and is
then renamed over the target. Readers see the old file or the new one, never a mix, and the contents
are never readable by other users, even while being written. The node key is published with an
exclusive link instead (node/home/identity.py), from the same temporary file.

The clock mark (node/clock_mark.py) is the one home file written in place, on purpose: it is
written inside every write transaction, and a fixed-width ``pwrite`` leaves no temporary file
behind when the process is killed.
"""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path

from feral.sync.errors import HomeFileError

__all__ = [
    "O_BINARY",
    "fill",
    "fsync_directory",
    "os_reason",
    "replace_private_file",
    "write_private_file",
    "write_temp",
]

O_BINARY = getattr(os, "O_BINARY", 0)
"""Windows' flag against newline translation; 0 elsewhere."""


def os_reason(exc: OSError) -> str:
    """The operating system's words for ``exc``, without Python's ``[Errno n]`` prefix."""
    return exc.strerror or str(exc)


def write_private_file(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically, mode 0600, durable once this returns.

    Raises:
        HomeFileError: the file cannot be written; the message names it.
    """
    try:
        replace_private_file(path, data)
    except OSError as exc:
        raise HomeFileError(f"{path}: cannot write: {os_reason(exc)}") from exc


def replace_private_file(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically, mode 0600; errors stay :class:`OSError`.

    Args:
        durable: flush the file and the new name to disk before returning. Derived files that
            are rebuilt at will (wiki pages) skip it: one ``fsync`` per page is all its cost.
    """
    temp = write_temp(path, data, durable=durable)
    try:
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    if durable:
        fsync_directory(path.parent)


def write_temp(path: Path, data: bytes, *, durable: bool = True) -> Path:
    """Write ``data`` to a new 0600 file beside ``path`` (flushed to disk when ``durable``)."""
    temp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_BINARY, 0o600)
    try:
        fill(fd, data, durable=durable)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


def fill(fd: int, data: bytes, *, durable: bool = True) -> None:
    """Give the open file ``fd`` mode 0600 (whatever the umask did), write it and close it."""
    with os.fdopen(fd, "wb") as file:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, 0o600)
        file.write(data)
        file.flush()
        if durable:
            os.fsync(fd)


def fsync_directory(directory: Path) -> None:
    """Make a new name in ``directory`` durable (POSIX only; Windows cannot open a directory)."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno != errno.EINVAL:  # EINVAL: this file system cannot sync directories
            raise
    finally:
        os.close(fd)
