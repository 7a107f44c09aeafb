"""Starting the resident node after a command that worked alone, and the resident's process.

``feral memory remember`` and ``search`` hand their request to the process that has the node and the
model loaded already: a running ``feral serve``, else the home's resident (node/serve/resident.py).
With neither, the command does the work itself and, once it has printed its answer, starts a
resident for the next command (:func:`start_resident`): a process of its own session, detached from
the terminal, whose stdin is ``/dev/null`` and whose output goes to ``HOME/resident.log``. It runs
``python -m feral.cli.resident HOME IDLE_S`` (:func:`main`).

None is started when ``cli.resident_idle_s`` (or ``$FERAL_RESIDENT_IDLE_S``) is 0, when one
runs or is starting already (it holds ``HOME/resident.lock``), or when a ``feral serve`` runs on
the home (a TLS one, which commands do not hand to: the resident would stop at once).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

__all__ = ["LOG_FILE", "main", "resident_idle", "start_resident"]

LOG_FILE = "resident.log"
MAX_LOG_BYTES = 1024 * 1024
"""A log longer than this is started afresh by the next resident."""
LOCK_TRIES = 10
"""A command's probe holds the resident lock for an instant: a starting resident tries again."""


def resident_idle(home: Path) -> float:
    """The idle time a resident started now would have (0: none is started).

    Raises:
        ConfigError: the settings or ``$FERAL_RESIDENT_IDLE_S`` are invalid.
    """
    from feral.node.home.resident_runtime import resident_idle_s
    from feral.node.settings.config import load_settings

    return resident_idle_s(load_settings(home).cli.resident_idle_s)


def start_resident(home: Path, idle_s: float) -> int | None:
    """Start a resident on ``home`` unless none is wanted or one is there (see the module); its
    process id, or ``None``. A failure to start is written to its log, never the command's."""
    from feral.node.home.resident_runtime import resident_held
    from feral.node.home.serve_runtime import serve_running

    if idle_s <= 0 or resident_held(home) or serve_running(home):
        return None
    log_path = home / LOG_FILE
    try:
        if log_path.stat().st_size > MAX_LOG_BYTES:
            log_path.unlink()
    except OSError:
        pass
    argv = [sys.executable, "-m", "feral.cli.resident", str(home.absolute()), repr(idle_s)]
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, str(log_path), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600),
        (os.POSIX_SPAWN_DUP2, 1, 2),
    ]
    try:  # posix_spawn, not subprocess: no child object to warn when this process ends first
        return os.posix_spawn(sys.executable, argv, dict(os.environ), file_actions=actions,
                              setsid=True)  # fmt: skip
    except (OSError, NotImplementedError):  # NotImplementedError: no setsid in posix_spawn here
        return None


def main(argv: list[str]) -> int:
    """The resident's process: ``HOME IDLE_S``. Exits 0 when another resident holds the home,
    when a serve runs there, or when the home is gone; 1 on an error, said in one line."""
    from feral.node.home.home_paths import DATABASE_FILE, KEY_FILENAME
    from feral.node.home.resident_runtime import resident_lock
    from feral.sync.errors import FeralError

    home, idle_s = Path(argv[0]), float(argv[1])
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(message)s")
    if not (home / KEY_FILENAME).is_file() or not (home / DATABASE_FILE).is_file():
        return 0  # removed since the command ran: never make a home here
    os.chdir(home)  # hold no other folder busy
    for _ in range(LOCK_TRIES):
        with resident_lock(home) as mine:
            if mine:
                try:
                    return _serve(home, idle_s)
                except FeralError as exc:
                    print(f"feral resident on {home}: {exc}", file=sys.stderr)
                    return 1
        time.sleep(0.02)
    return 0


def _serve(home: Path, idle_s: float) -> int:
    from feral.node.embedding import serve_running
    from feral.node.node import Node
    from feral.node.serve.listener import open_listener
    from feral.node.serve.resident import ResidentService

    from .context import run

    if serve_running(home):
        return 0
    listener = open_listener("127.0.0.1", 0)

    async def body() -> str | None:
        node = await Node.open(home)
        try:
            service = ResidentService(node, idle_s, listener)
            where = f"127.0.0.1:{service.runtime.port}"
            await service.run(lambda: print(f"feral resident {os.getpid()} answering on {where}"
                                            f" for {home}; stops after {idle_s:g} s idle",
                                            file=sys.stderr, flush=True))  # fmt: skip
            return service.stopped_because
        finally:
            await node.close()

    try:
        reason = run(body(), fast_loop=True)
    finally:
        listener.close()
    print(f"feral resident {os.getpid()} stopped: {reason or 'told to stop'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
