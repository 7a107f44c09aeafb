"""The dialler's side of pinning: the server's certificate must carry the paired node's key.

The check runs in the WebSocket client's opening handshake before the upgrade request is
written, that is after TLS has completed and before this node has sent a byte of its own over
the encrypted channel: a relay that terminates TLS with another certificate learns nothing, not
even which path was asked for (docs/PROTOCOL.md §1).
"""

from __future__ import annotations

import ssl
from typing import Any

from websockets.asyncio.client import ClientConnection

from feral.sync.types import NodeId

from .tls import certificate_fingerprint, certificate_node_id

__all__ = ["PinMismatch", "pinned_connection"]


class PinMismatch(Exception):
    """The server presented a certificate that is not the paired node's: nothing was sent."""


def pinned_connection(expected: NodeId) -> type[ClientConnection]:
    """A client connection class that refuses any server but ``expected`` before upgrading."""

    class PinnedConnection(ClientConnection):
        certificate: str | None = None
        """The fingerprint of the certificate the server presented (once pinned)."""

        async def handshake(self, *args: Any, **kwargs: Any) -> None:
            self.certificate = check_pin(self.transport.get_extra_info("ssl_object"), expected)
            await super().handshake(*args, **kwargs)

    return PinnedConnection


def check_pin(ssl_object: ssl.SSLObject | None, expected: NodeId) -> str:
    """The presented certificate's fingerprint, if its key is ``expected``'s.

    Raises:
        PinMismatch: no certificate, not an Ed25519 one, or another node's; the message names
            the expected id and what was presented.
    """
    der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    if not der:
        raise PinMismatch(f"the server presented no certificate; expected node {expected}")
    fingerprint = certificate_fingerprint(der)
    presented = certificate_node_id(der)
    if presented is None:
        raise PinMismatch(
            f"the server's certificate (sha256 {fingerprint}) holds no Ed25519 node key; "
            f"expected node {expected}"
        )
    if presented != expected:
        raise PinMismatch(
            f"the server's certificate is node {presented}'s (sha256 {fingerprint}), not the "
            f"paired node {expected}'s: another node or a relay is at that address"
        )
    return fingerprint
