"""``feral sync ...`` and ``feral serve``: this node's id, its peers, and syncing with them."""

from __future__ import annotations

import asyncio
import datetime
import logging
import sys
from pathlib import Path

import click

from feral.node.clock_state import clock_state, reset_clock
from feral.node.config import PeerSettings, load_settings, save_settings, with_peer, without_peer
from feral.node.dial import dial
from feral.node.identity import load_or_create_identity
from feral.node.node import Node
from feral.node.peer import LinkResult
from feral.node.status import peer_rows, sync_status
from feral.sync.errors import NotFoundError
from feral.sync.hlc import COUNTER_BITS
from feral.sync.text import printable
from feral.sync.types import NodeId
from feral.sync.units import format_ms

from .context import pass_home, with_node
from .output import echo_json, echo_table, json_option, queue_line, shorten

__all__ = ["serve", "sync"]


@click.group()
def sync() -> None:
    """See and steer sync with this node's peers."""


@sync.command(name="node-id")
@pass_home
def node_id(home: Path) -> None:
    """Print this node's id (the fingerprint of its public key), one line."""
    click.echo(load_or_create_identity(home).node_id)


def _when(ms: int | None) -> str:
    if ms is None:
        return "never"
    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


@sync.group(invoke_without_command=True)
@json_option("peers")
@click.pass_context
def peers(ctx: click.Context, as_json: bool) -> None:
    """List paired peers with their HLC lag; `peers add` and `peers remove` change them."""
    if ctx.invoked_subcommand is not None:
        return
    home: Path = ctx.obj
    rows = with_node(home, peer_rows)
    if as_json:
        echo_json(rows)
        return
    echo_table(
        [
            (
                r["node_id"],
                r["name"] or "-",
                r["url"] or "(accept only)",
                _lag(r["hlc_lag_ms"]),
                _when(r["last_sync_at"]),
            )
            for r in rows
        ],  # fmt: skip
        ("node id", "name", "url", "hlc lag", "last sync"),
    )


def _lag(ms: int | None) -> str:
    return "unknown" if ms is None else f"{ms} ms"


@peers.command(name="add")
@click.argument("url", required=False)
@click.option("--node-id", "peer_id", required=True, help="The peer's id (feral sync node-id).")
@pass_home
def peers_add(home: Path, url: str | None, peer_id: str) -> None:
    """Pair with a peer; without URL the peer may connect here but is never dialled."""
    me = load_or_create_identity(home)
    if peer_id == me.node_id:
        raise click.ClickException("that is this node's own id")
    settings = load_settings(home)
    updated = with_peer(settings, PeerSettings(NodeId(peer_id), url))
    save_settings(home, updated)
    click.echo(f"Paired with {peer_id}" + (f" at {url}" if url else " (accept only)"))


@peers.command(name="remove")
@click.argument("peer", metavar="ID|URL")
@pass_home
def peers_remove(home: Path, peer: str) -> None:
    """Unpair a peer, by id or URL."""
    settings = load_settings(home)
    save_settings(home, without_peer(settings, peer))
    click.echo(f"Removed {peer}")


async def _sync_round(node: Node, target: str | None, show_progress: bool) -> list[LinkResult]:
    chosen = [
        p for p in node.settings.sync.peers
        if p.url and (target is None or target in (p.node_id, p.url))
    ]  # fmt: skip
    if target is not None and not chosen:
        raise NotFoundError(f"no paired peer with a URL matches {target!r}")
    if not chosen:
        raise NotFoundError("no paired peer has a URL to dial; add one with feral sync peers add")
    if not show_progress:
        return list(await asyncio.gather(*(dial(node, p, until_quiet=True) for p in chosen)))
    # The total is not known up front (the peer streams what we lack): show rows as they land.
    with click.progressbar(length=0, label="Syncing", file=sys.stderr, show_pos=True) as bar:
        rounds = [dial(node, p, until_quiet=True, progress=bar.update) for p in chosen]
        return list(await asyncio.gather(*rounds))


@sync.command()
@click.option("--peer", "target", metavar="ID|URL", help="Sync with this peer only.")
@json_option("results")
@pass_home
def now(home: Path, target: str | None, as_json: bool) -> None:
    """Run one sync round with every peer that has a URL; exit 1 if any failed."""
    # A refusal is reported below, once: keep the link's log line off stderr (one line, §6).
    feral_log = logging.getLogger("feral")
    if not feral_log.handlers:
        feral_log.addHandler(logging.NullHandler())
    results = with_node(home, lambda node: _sync_round(node, target, sys.stderr.isatty()))
    outcomes = [
        {
            "peer": r.peer,
            "received": r.received,
            "sent": r.sent,
            "ok": r.error is None and r.quiet,
            "error": printable(r.error)
            if r.error
            else (None if r.quiet else "the link closed before the round ended"),
        }
        for r in results
    ]
    if as_json:
        echo_json(outcomes)
    else:
        for o in outcomes:
            state = "ok" if o["ok"] else f"failed: {o['error']}"
            click.echo(f"{o['peer']}  received {o['received']} row(s)  {state}")
    failed = [o for o in outcomes if not o["ok"]]
    if failed:
        raise click.ClickException(f"sync with {failed[0]['peer']} failed: {failed[0]['error']}")


@sync.command()
@json_option("status")
@pass_home
def status(home: Path, as_json: bool) -> None:
    """This node's HLC and state digest; per peer reachability, lag, backlog, last error."""
    result = with_node(home, sync_status)
    if as_json:
        echo_json(result)
        return
    click.echo(f"node      {result['node_id']} ({result['name']})")
    click.echo(f"hlc       {result['hlc']}")
    click.echo(f"digest    {result['state_digest']}")
    click.echo(f"embedding {queue_line(result['embed_pending'])}")
    if result["clock"]["warning"]:
        click.echo(f"CLOCK     {result['clock']['warning']}")
    alarms = result["integrity_alarms"]
    if alarms["count"]:
        latest = alarms["latest"]
        click.echo(
            f"INTEGRITY {alarms['count']} colliding entries received (latest from "
            f"{latest['peer'][:12] or 'unknown'}: {latest['origin'][:12]} stamp {latest['hlc']}); "
            "kept ours, this node and its peers disagree"
        )
    rows = []
    for p in result["peers"]:
        link = "wss" if p["encrypted"] else "ws (unencrypted)"
        rows.append((
            p["node_id"][:12], p["url"] or "(accept only)", "yes" if p["reachable"] else "no",
            _when(p["last_sync_at"]), _lag(p["hlc_lag_ms"]), p["backlog"],
            "yes" if p["in_sync"] else "no", link, shorten(printable(p["last_error"] or "-"), 50),
        ))  # fmt: skip
    echo_table(
        rows,
        ("peer", "url", "reachable", "last sync", "hlc lag", "backlog", "in sync", "link",
         "last error"),
    )  # fmt: skip


@sync.command(name="clock-reset")
@pass_home
def clock_reset(home: Path) -> None:
    """Bring this node's writes stamped ahead of its clock (a clock that ran ahead, now right)
    back to the clock, keeping their order; refused if a peer already holds them."""
    done = with_node(home, reset_clock)
    if not done.entries:
        click.echo("no write of this node is stamped ahead of its clock; its clock mark, if "
                   "it was ahead, is back at the clock")  # fmt: skip
        return
    was = format_ms((done.newest_before - done.newest_after) >> COUNTER_BITS)
    click.echo(
        f"re-stamped {done.entries} write(s) of this node that were up to {was} ahead of its "
        "clock, in their order; peers receive them at the next sync"
    )


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=9090, show_default=True)
@pass_home
def serve(home: Path, host: str, port: int) -> None:
    """Run this node: /sync for peers, the HTTP API, live sync with peers, until SIGINT or SIGTERM.

    On a non-loopback --host the HTTP API asks for the bearer token kept in HOME/api_token
    (made on first use, mode 0600).
    """

    # The server's modules (Starlette, uvicorn, the HTTP API) are imported here, not by every
    # command: a one-shot ``sync now`` only dials.
    from feral.node.api import API_TOKEN_FILE
    from feral.node.service import SyncService

    async def body(node: Node) -> None:
        service = SyncService(node, host, port)
        if service.api_token is not None:
            where = "a new one was written to" if service.api_token_created else "it is in"
            click.echo(
                f"not on loopback: the HTTP API needs 'Authorization: Bearer <token>'; "
                f"{where} {node.home / API_TOKEN_FILE}",
                err=True,
            )

        warning = (await clock_state(node)).warning

        def started() -> None:
            where = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
            click.echo(
                f"feral {node.node_id} serving ws://{where}/sync and http://{where}/api",
                err=True,
            )
            if warning:
                click.echo(f"! {warning}", err=True)

        await service.run(started)

    with_node(home, body, serving=True)
