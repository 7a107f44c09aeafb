"""Where the resident node of a home answers, and whether one lives: ``HOME/resident.json``.

A ``feral memory remember`` or ``search`` that finds no ``feral serve`` on its home does the
work itself, which costs most of a second (the node's modules, onnxruntime, the model's session),
and then starts a *resident*: a process that opens the node and the model once and answers the
next commands' requests, as a running serve does, until it has been idle for
``cli.resident_idle_s`` seconds (cli/resident.py runs it; node/serve/resident.py is its server).

The resident writes this file (atomically, mode 0600) once it listens, and removes it when it
stops: its process id, its loopback port, the bearer token its API asks for (made afresh by
each resident, so only who can read this file can call it), and the mark of the installed
feral that runs it. It holds ``HOME/resident.lock`` (exclusive) for as long as it runs, which
the operating system releases however it ends, so a file left by a killed resident is stale:
its process is gone or the lock is free. A file written by another installation of feral (a
``pip install`` since) is stale too, so a command is never answered by older code.

Reading it imports nothing beyond the standard library, so checking costs a command nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from .env_seconds import env_seconds
from .home_paths import DATABASE_FILE, KEY_FILENAME, SETTINGS_FILENAME
from .serve_runtime import exclusive_lock, forget_record, lock_held, process_alive, read_record

__all__ = [
    "IDLE_ENV",
    "MAX_IDLE_S",
    "RESIDENT_FILE",
    "RESIDENT_LOCK_FILE",
    "ResidentRuntime",
    "code_mark",
    "forget_resident",
    "home_mark",
    "live_resident",
    "record_resident",
    "resident_held",
    "resident_idle_s",
    "resident_lock",
]

RESIDENT_FILE = "resident.json"
RESIDENT_LOCK_FILE = "resident.lock"
IDLE_ENV = "FERAL_RESIDENT_IDLE_S"
"""Overrides ``cli.resident_idle_s`` for one shell or one script (0: start none)."""
MAX_IDLE_S = 86_400.0
"""A day: a resident that lingers longer is a server, and ``feral serve`` is there for that."""


HomeMark = list[list[int] | None]


class ResidentRuntime(NamedTuple):
    """What ``HOME/resident.json`` says about the resident that wrote it."""

    pid: int
    port: int
    """Its port on 127.0.0.1."""
    token: str
    """What its API asks for in ``Authorization: Bearer``."""
    code: str
    """:func:`code_mark` of the feral it runs."""
    mark: HomeMark
    """:func:`home_mark` of the home when it opened it."""


def code_mark() -> str:
    """The installed feral: its version, and when this file of it was written (a reinstall
    writes every file anew, so a resident left running by the old code is not asked)."""
    import feral

    try:
        written = os.stat(__file__).st_mtime_ns
    except OSError:
        written = 0
    return f"{feral.__version__}:{written}"


def home_mark(home: Path) -> HomeMark:
    """What a resident read at start and must not see change: the settings and the key (each
    file's inode, size and time), and which database file the home holds (its inode). A
    command compares it too, so an edit is never answered by a resident that read the old."""

    def stat_of(name: str, *, contents: bool) -> list[int] | None:
        try:
            found = os.stat(home / name)
        except OSError:
            return None
        if contents:
            return [found.st_ino, found.st_size, found.st_mtime_ns]
        return [found.st_dev, found.st_ino]

    return [
        stat_of(SETTINGS_FILENAME, contents=True),
        stat_of(KEY_FILENAME, contents=True),
        stat_of(DATABASE_FILE, contents=False),
    ]


def record_resident(home: Path, runtime: ResidentRuntime) -> None:
    """Called by the resident once it listens: the file, replaced atomically."""
    from .files import write_private_file

    write_private_file(home / RESIDENT_FILE, (json.dumps(runtime._asdict()) + "\n").encode())


def forget_resident(home: Path, pid: int) -> None:
    """Called by the resident as it stops: remove the file if this process wrote it."""
    forget_record(home / RESIDENT_FILE, pid)


def live_resident(home: Path) -> ResidentRuntime | None:
    """The file's resident if it runs and runs this feral, else ``None``.

    Whether it still answers is for the caller to find out: a refused connection is stale too.
    """
    runtime = _read(home)
    if runtime is None or not process_alive(runtime.pid) or not resident_held(home):
        return None
    current = runtime.code == code_mark() and runtime.mark == home_mark(home)
    return runtime if current else None


def resident_held(home: Path) -> bool:
    """Whether a resident holds ``HOME/resident.lock`` now (starting, answering or stopping)."""
    return lock_held(home / RESIDENT_LOCK_FILE)


@contextlib.contextmanager
def resident_lock(home: Path) -> Iterator[bool]:
    """The resident's lock on ``home`` for the block: ``True`` if this process holds it,
    ``False`` if another resident does (then this one has nothing to do)."""
    with exclusive_lock(home / RESIDENT_LOCK_FILE) as mine:
        yield mine


def resident_idle_s(setting: float) -> float:
    """How long a resident stays after its last request: ``$FERAL_RESIDENT_IDLE_S`` when set,
    else the setting (``cli.resident_idle_s``); 0 means no resident is started. Windows has
    no resident (it has no lock that ends with its holder): 0 there.

    Raises:
        ConfigError: the variable is not a number of seconds from 0 to a day.
    """
    if os.name == "nt":  # pragma: no cover - Windows
        return 0.0
    return env_seconds(IDLE_ENV, setting, least=0, most=MAX_IDLE_S, zero=True)


def _read(home: Path) -> ResidentRuntime | None:
    fields = {"pid": int, "port": int, "token": str, "code": str, "mark": list}
    record = read_record(home / RESIDENT_FILE, fields)
    return ResidentRuntime(*record) if record is not None else None  # type: ignore[arg-type]
