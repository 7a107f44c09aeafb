"""The checks ``feral serve`` makes before it creates anything: the address, the port, the home.

The listening socket is bound here, before the node opens its home (which makes a key, settings
and a database on first use) or writes an API token, and is then handed to the server: a port
already taken, a host that is not an address of this machine, or a second ``serve`` on the same
home is one line on stderr and exit 1, with nothing left behind.
"""

from __future__ import annotations

import contextlib
import errno
import socket
from collections.abc import Iterator
from pathlib import Path

from feral.node.embedding import serve_running
from feral.node.home.serve_runtime import exclusive_lock
from feral.sync.errors import NotAvailable

__all__ = ["BACKLOG", "SOLE_LOCK_FILE", "open_listener", "refuse_second_serve", "sole_server"]

BACKLOG = 2048
"""The listen queue uvicorn would use."""
SOLE_LOCK_FILE = "serve.sole.lock"


def refuse_second_serve(home: Path) -> None:
    """Raise if a ``feral serve`` already runs on ``home`` (it holds the serve lock).

    Raises:
        NotAvailable: another server holds the home.
    """
    if serve_running(home):
        raise NotAvailable(f"a feral serve is already running on {home}; stop it first")


@contextlib.contextmanager
def sole_server(home: Path) -> Iterator[None]:
    """Held while a server runs: an exclusive lock on ``HOME/serve.sole.lock``, for two
    ``serve`` started at the same moment, which both pass :func:`refuse_second_serve`.

    A file of its own: the shared serve lock (node/embedding.py) is probed by every command,
    and a probe that held it for an instant must not make a starting server give up.

    Raises:
        NotAvailable: another server holds it.
    """
    with exclusive_lock(home / SOLE_LOCK_FILE) as mine:
        if not mine:
            raise NotAvailable(f"a feral serve is already running on {home}")
        yield


def open_listener(host: str, port: int) -> socket.socket:
    """A socket listening on ``host``:``port`` (port 0: any free port).

    Raises:
        NotAvailable: the host does not resolve or is not this machine's, or the port is taken.
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, socket.gaierror) else str(exc)
        raise NotAvailable(f"cannot listen on {host!r}: {reason}") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise NotAvailable(_bind_error(host, port, exc)) from None
    return sock


def _bind_error(host: str, port: int, exc: OSError) -> str:
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if exc.errno == errno.EADDRINUSE:
        return f"port {port} is in use on {host} (another program or another feral serve)"
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"cannot listen on {where}: {host} is not an address of this machine"
    if exc.errno == errno.EACCES:
        return f"cannot listen on {where}: not allowed (ports below 1024 need privileges)"
    return f"cannot listen on {where}: {exc.strerror or exc}"
