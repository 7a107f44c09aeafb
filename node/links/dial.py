"""Dialling a peer: ``feral sync now`` runs one round, ``feral serve`` (node/serve/service.py)
redials.

Apart from the server so that a command that only dials never imports the server's modules
(Starlette, uvicorn, the HTTP API): ``feral sync now`` starts quicker, and its start-up is part
of every one-shot sync.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from feral.node.node_kernel import NodeKernel
from feral.node.settings.config import PeerSettings
from feral.sync.codec import MAX_FRAME_BYTES
from feral.sync.errors import FeralError
from feral.sync.invitation import JoinClaim

from .peer import FailureLog, LinkResult, PeerLink
from .pinned import PinMismatch, pinned_connection
from .tls import client_context, plaintext_refusal
from .transport import ClientTransport

__all__ = ["FRAME_LIMIT", "dial", "sync_url"]

FRAME_LIMIT = MAX_FRAME_BYTES + 1024


def sync_url(url: str) -> str:
    """The peer's ``/sync`` endpoint: a URL given without a path gets ``/sync``."""
    parts = urlsplit(url)
    path = parts.path if parts.path not in ("", "/") else "/sync"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


async def dial(
    node: NodeKernel,
    peer: PeerSettings,
    *,
    until_quiet: bool,
    progress: Callable[[int, int], None] | None = None,
    failures: FailureLog | None = None,
    join: JoinClaim | None = None,
) -> LinkResult:
    """Connect to ``peer`` and run a link (one round if ``until_quiet``).

    With ``join`` (``feral sync join``) the peer is the inviter, not yet paired here, and the
    link proves the invitation's secret to it (node/links/invite.py).

    With ``failures`` (``feral serve``) it never raises: a status write the database refuses
    is logged there and the link goes on. Without (a CLI round), such an error is raised.
    """
    assert peer.url is not None
    from feral.storage.link import peers as peer_status

    await _bookkeep(
        node, failures, peer, peer_status.record_attempt, peer.node_id, peer.url, node.now_ms()
    )
    refusal = None if peer.insecure_plaintext else plaintext_refusal(peer.url)
    if refusal is not None:
        return await _failed(node, failures, peer, refusal, "insecure_url")
    secure = peer.url.startswith("wss://")
    try:
        async with connect(
            sync_url(peer.url),
            ssl=client_context() if secure else None,
            create_connection=pinned_connection(peer.node_id) if secure else None,
            proxy=None,
            compression=None,
            open_timeout=10,
            ping_interval=20,
            ping_timeout=20,
            close_timeout=10,
            max_size=FRAME_LIMIT,
            max_queue=16,
        ) as connection:
            certificate = getattr(connection, "certificate", None)  # node/links/pinned.py's
            transport = ClientTransport(connection, encrypted=secure, certificate=certificate)
            link = PeerLink(
                node, transport, expected=peer.node_id, url=peer.url,
                until_quiet=until_quiet, progress=progress, failures=failures, join=join,
            )  # fmt: skip
            return await link.run()
    except PinMismatch as exc:
        message = f"refused {peer.url} before sending anything: {exc}"
        return await _failed(node, failures, peer, message, "certificate_mismatch")
    except ssl.SSLError as exc:  # before OSError, its base: say what it means
        message = (
            f"cannot reach {peer.url}: the TLS handshake failed ({exc.reason or exc}); "
            "does the peer serve TLS (feral serve --tls)?"
        )
        return await _failed(node, failures, peer, message)
    except ConnectionClosed:  # the link's transport ends its own closes: this is the opening
        message = f"cannot reach {peer.url}: the connection closed during the opening handshake"
        return await _failed(node, failures, peer, message)
    except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as exc:
        return await _failed(node, failures, peer, f"cannot reach {peer.url}: {exc}")


async def _failed(
    node: NodeKernel,
    failures: FailureLog | None,
    peer: PeerSettings,
    message: str,
    code: str = "unreachable",
) -> LinkResult:
    """A dial that never reached a session: record why in status, and say so."""
    from feral.storage.link import peers as peer_status

    if failures is not None and code != "unreachable":
        failures.failed(peer.node_id, message)  # a refusal, not a network hiccup: logged
    await _bookkeep(node, failures, peer, peer_status.record_error, peer.node_id, message,
                    node.now_ms(), unreachable=True)  # fmt: skip
    return LinkResult(peer=peer.node_id, error=message, error_code=code)


async def _bookkeep(
    node: NodeKernel,
    failures: FailureLog | None,
    peer: PeerSettings,
    fn: Callable[..., None],
    *args: Any,
    **kwargs: Any,
) -> None:
    """A peer-status write of the dialler: under ``serve`` its failure is logged, never fatal."""
    try:
        await node.store.write(fn, *args, **kwargs)
    except FeralError as exc:
        if failures is None:
            raise
        failures.failed(peer.node_id, str(exc))
