"""Where a running ``feral serve`` of a home answers its HTTP API: ``HOME/serve.runtime.json``.

``feral serve`` writes the file once it listens (atomically, mode 0600) and removes it when it
stops cleanly. It holds the process id, the address and port, whether the API is served over
TLS and whether it asks for the bearer token. ``feral memory remember`` and ``feral memory
search`` read it before importing the node, and hand their request to that server, which holds
the node and the model loaded already (cli/serve_handoff.py). It holds a nonce made afresh by
each start too, which only who can read the file knows: before it sends anything of the user's,
a command asks the port for :func:`handoff_proof` of a challenge of its own, and only the
process that wrote the file can answer it (node/serve/handoff_proof.py).

A file left by a server that did not stop cleanly (killed) is stale: its process is gone, the
home's serve lock (``HOME/serve.lock``, which the operating system releases when a server ends,
however it ends) is not held, or its port refuses the connection. It is then ignored, and the
command does its work itself; so a request never goes to a port another program took since.
A stopping server removes the file before it closes its port; a command that read it just
before is still refused by the proof, as is one that reads a file whose server was killed.
Reading it imports nothing beyond the standard library, so checking costs a command nothing.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

__all__ = [
    "CHALLENGE_HEADER",
    "PROOF_PATH",
    "handoff_proof",
    "process_alive",
    "RUNTIME_FILE",
    "SERVE_LOCK_FILE",
    "ServeRuntime",
    "exclusive_lock",
    "forget_record",
    "forget_serve_runtime",
    "lock_file",
    "live_serve_runtime",
    "lock_held",
    "read_record",
    "record_serve_runtime",
    "serve_running",
]

RUNTIME_FILE = "serve.runtime.json"
SERVE_LOCK_FILE = "serve.lock"
"""Locked (shared) by ``feral serve`` while it runs (node/embedding.py's ``serving_lock``)."""
WILDCARD_DIALS = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}
"""A server bound to every address is reached on this machine's loopback address."""
PROOF_PATH = "/api/handoff/proof"
"""Where a server or resident answers a command's challenge (node/serve/handoff_proof.py)."""
CHALLENGE_HEADER = "x-feral-challenge"


def handoff_proof(key: str, challenge: str) -> str:
    """What only a process that knows ``key`` (a runtime file's nonce or token) answers to
    ``challenge``: BLAKE2b keyed with it, in hex (a MAC; its C module imports in a fraction
    of a millisecond, where ``hmac`` would import OpenSSL's hashes, 3 ms of every command)."""
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - a Python built without it
        from hashlib import blake2b
    return blake2b(challenge.encode(), key=key.encode()[:64], digest_size=32).hexdigest()


class ServeRuntime(NamedTuple):
    """What ``HOME/serve.runtime.json`` says about the server that wrote it."""

    pid: int
    host: str
    """The address it was told to listen on (``--host``)."""
    port: int
    tls: bool
    token: bool
    """Whether its API asks for ``Authorization: Bearer`` (the token in ``HOME/api_token``)."""
    nonce: str
    """Made afresh by each start: the key of its :func:`handoff_proof`."""

    @property
    def dial_host(self) -> str:
        """The address a command on this machine connects to."""
        return WILDCARD_DIALS.get(self.host, self.host)


def record_serve_runtime(home: Path, runtime: ServeRuntime) -> None:
    """Called by ``feral serve`` once it listens: the file, replaced atomically."""
    from .files import write_private_file

    write_private_file(home / RUNTIME_FILE, (json.dumps(runtime._asdict()) + "\n").encode())


def forget_serve_runtime(home: Path, pid: int) -> None:
    """Called by ``feral serve`` as it stops: remove the file if this process wrote it."""
    forget_record(home / RUNTIME_FILE, pid)


def forget_record(path: Path, pid: int) -> None:
    """Remove the runtime file ``path`` if the process ``pid`` wrote it (another one may have
    replaced it since: then it is that process's to remove)."""
    if read_record(path, {"pid": int}) == [pid]:
        with contextlib.suppress(OSError):
            path.unlink()


def live_serve_runtime(home: Path) -> ServeRuntime | None:
    """The file's server if its process is alive, else ``None`` (no file, unreadable, stale).

    Whether it still answers is for the caller to find out: a refused connection is stale too.
    """
    runtime = _read(home)
    if runtime is None or not process_alive(runtime.pid):
        return None
    if os.name != "nt" and not serve_running(home):  # Windows has no such lock: the port tells
        return None
    return runtime


def serve_running(home: Path) -> bool:
    """Whether a ``feral serve`` holds the serve lock on ``home`` right now (never on Windows,
    which has no such lock: there CLI commands drain their own embedding queue)."""
    return lock_held(home / SERVE_LOCK_FILE)


def lock_held(path: Path) -> bool:
    """Whether some process holds a lock (shared or exclusive) on the file ``path`` now: a
    probe that takes it for an instant when it is free (never on Windows: ``False``)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return False
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing the file releases a lock taken just now
    return False


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[bool]:
    """An exclusive lock on the file ``path`` (made 0600 if missing) for the block: ``True`` if
    this process took it, ``False`` if another holds it. The operating system releases it when
    the holder ends, however it ends (Windows has no such lock: ``True`` there; nor has a
    read-only home where the file cannot be made: ``True``)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield True
        return
    fd = lock_file(path)
    if fd is None:  # a read-only home: nothing is written there, no writer to keep out
        yield True
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def lock_file(path: Path) -> int | None:
    """A descriptor of the lock file ``path`` (made 0600 if missing), read-only if it exists on
    a home that cannot be written (a lock needs no write), or ``None`` if it cannot be made
    there."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
    try:
        return os.open(path, os.O_RDONLY)
    except OSError:
        return None


def _read(home: Path) -> ServeRuntime | None:
    fields = {"pid": int, "host": str, "port": int, "tls": bool, "token": bool, "nonce": str}
    record = read_record(home / RUNTIME_FILE, fields)
    return ServeRuntime(*record) if record is not None else None  # type: ignore[arg-type]


def read_record(path: Path, fields: dict[str, type]) -> list[object] | None:
    """The values of ``fields`` in the JSON object in ``path``, in their order, each of exactly
    its type (``True`` is no port number), or ``None``: no file, not JSON, a key missing."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    values = [data.get(key) for key in fields]
    if not all(type(v) is t for v, t in zip(values, fields.values(), strict=True)):
        return None
    return values


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user counts: it is not ours to judge)."""
    if pid <= 0:
        return False
    if os.name == "nt":  # there, os.kill ends the process: its port says whether it runs
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
