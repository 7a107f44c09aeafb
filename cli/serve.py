"""``feral serve``: run this node until SIGINT or SIGTERM: /sync for peers, the HTTP API and live
sync with its peers. Its own module at the top of cli/, beside the ``memory`` and ``sync`` rooms:
it is neither, and the server's modules load only when it runs."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from feral.cli.context import pass_home, with_node

if TYPE_CHECKING:
    from feral.node.node import Node

__all__ = ["serve"]


def _log_links_to_stderr() -> None:
    """The serve log: what the links say at INFO and above (link up, catch-up progress,
    failures once), one plain line each on stderr."""
    import logging

    feral_log = logging.getLogger("feral")
    if not feral_log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        feral_log.addHandler(handler)
        feral_log.setLevel(logging.INFO)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=9090,
    show_default=True,
    help="Port for /sync and the HTTP API (0: any free port).",
)
@click.option(
    "--tls/--no-tls",
    default=None,
    help="Serve over TLS with this node's certificate [default: on beyond loopback].",
)
@pass_home
def serve(home: Path, host: str, port: int, tls: bool | None) -> None:
    """Run this node: /sync for peers, the HTTP API, live sync with peers, until SIGINT or SIGTERM.

    On a non-loopback --host the HTTP API asks for the bearer token kept in HOME/api_token
    (made on first use, mode 0600), and everything is served over TLS (wss://, https://) with
    the node's own certificate (feral sync cert prints it). A port in use, a bad --host or a
    second serve on HOME is refused before anything is created.
    """

    # The server's modules (Starlette, uvicorn, the HTTP API) are imported here, not by every
    # command: a one-shot ``sync now`` only dials.
    from feral.node.api import API_TOKEN_FILE
    from feral.node.clock_state import clock_state
    from feral.node.home.serve_runtime import (
        ServeRuntime,
        forget_serve_runtime,
        record_serve_runtime,
    )
    from feral.node.links.tls import is_loopback_host
    from feral.node.serve.listener import open_listener, refuse_second_serve
    from feral.node.serve.serve_address import record_serve_url, serve_url
    from feral.node.serve.service import SyncService

    refuse_second_serve(home)
    listener = open_listener(host, port)
    port = int(listener.getsockname()[1])
    _log_links_to_stderr()

    async def body(node: Node) -> None:
        service = SyncService(node, host, port, tls=tls, listener=listener)
        if service.tls is None and not is_loopback_host(host):
            click.echo(f"! --no-tls on {host}: links and the API are not encrypted", err=True)
        if service.api_token is not None:
            where = "a new one was written to" if service.api_token_created else "it is in"
            click.echo(
                f"not on loopback: the HTTP API needs 'Authorization: Bearer <token>'; "
                f"{where} {node.home / API_TOKEN_FILE}",
                err=True,
            )

        warning = (await clock_state(node)).warning

        def started() -> None:
            runtime = ServeRuntime(os.getpid(), host, port, service.tls is not None,
                                   service.api_token is not None, service.nonce)  # fmt: skip
            ws, http = ("wss", "https") if service.tls is not None else ("ws", "http")
            if node.store.read_only is None:  # a read-only home gets no file: commands work alone
                record_serve_runtime(node.home, runtime)  # for remember and search (serve_handoff)
                record_serve_url(node.home, serve_url(host, port, ws))  # for feral sync invite
            # Only then the line that says it serves: whoever waits for it finds both files.
            where = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
            click.echo(
                f"feral {node.node_id} serving {ws}://{where}/sync and {http}://{where}/api",
                err=True,
            )
            if service.certificate is not None:
                click.echo(f"TLS certificate sha256 {service.certificate} (feral sync cert)",
                           err=True)  # fmt: skip
            if warning:
                click.echo(f"! {warning}", err=True)
            if node.store.read_only is not None:
                click.echo(f"! {node.store.read_only}; serving reads, writes are refused",
                           err=True)  # fmt: skip

        try:
            await service.run(started)
        finally:
            forget_serve_runtime(node.home, os.getpid())
        click.echo("feral serve stopped", err=True)

    try:
        with_node(home, body, serving=True)
    finally:
        listener.close()
