"""Whether an address or URL reaches this machine only: the one rule behind TLS by default, the
API token, plain ``ws://`` refusals and invitation warnings, kept in one place so they agree."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

__all__ = ["is_loopback_host", "is_loopback_url"]


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is this machine only."""
    name = host.strip().strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_loopback_url(url: str) -> bool:
    """Whether ``url`` reaches this machine only (no other device can dial it)."""
    return is_loopback_host(urlsplit(url).hostname or "")
