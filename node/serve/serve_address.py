"""Where the running ``feral serve`` can be dialled, for invitations (``feral sync invite``).

``feral serve`` writes the URL it serves to ``HOME/serve_url`` when it starts listening; an
invitation made without ``--url`` names that URL, but only while that server still holds the
home's serve lock, so a stale file from a server that has ended is never offered. A server bound
to every address (``0.0.0.0`` or ``::``) is named by this machine's address on the network it
reaches first (the default route), which is what another device on that network dials.
"""

from __future__ import annotations

import contextlib
import socket
from pathlib import Path

from feral.node.embedding import serve_running
from feral.node.home.files import write_private_file
from feral.node.links.addresses import is_loopback_url

__all__ = [
    "SERVE_URL_FILE",
    "is_loopback_url",
    "record_serve_url",
    "running_serve_url",
    "serve_url",
]

SERVE_URL_FILE = "serve_url"
_WILDCARDS = {"0.0.0.0": socket.AF_INET, "::": socket.AF_INET6, "": socket.AF_INET}
_PROBE = {socket.AF_INET: "192.0.2.1", socket.AF_INET6: "2001:db8::1"}
"""Documentation addresses: a UDP socket "connected" to one picks the outgoing address and
sends nothing."""


def _network_address(family: socket.AddressFamily) -> str:
    """This machine's address on its default route (loopback when there is no network)."""
    with contextlib.suppress(OSError), socket.socket(family, socket.SOCK_DGRAM) as probe:
        probe.connect((_PROBE[family], 9))
        return str(probe.getsockname()[0])
    return "127.0.0.1" if family == socket.AF_INET else "::1"


def serve_url(host: str, port: int, scheme: str = "ws") -> str:
    """The URL another device dials to reach a server listening on ``host:port``."""
    family = _WILDCARDS.get(host)
    address = _network_address(family) if family is not None else host
    if ":" in address:
        address = f"[{address}]"
    return f"{scheme}://{address}:{port}"


def record_serve_url(home: Path, url: str) -> None:
    """Called by ``feral serve`` once it listens."""
    write_private_file(home / SERVE_URL_FILE, f"{url}\n".encode())


def running_serve_url(home: Path) -> str | None:
    """The URL the running ``feral serve`` of ``home`` recorded, or ``None`` if none runs."""
    if not serve_running(home):
        return None
    try:
        text = (home / SERVE_URL_FILE).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None
