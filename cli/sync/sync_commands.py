"""``feral sync ...``: this node's id, its peers, and syncing with them."""

from __future__ import annotations

import datetime
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from feral.cli.context import pass_home, with_node
from feral.cli.home import check_home
from feral.cli.lazy_group import LazyGroup
from feral.cli.memory.conflict_commands import conflicts_line
from feral.cli.output import (
    count,
    duration,
    echo_json,
    echo_table,
    json_option,
    queue_line,
    short_id,
    stamp,
)
from feral.cli.status_cells import STATUS_HEADERS, status_cells
from feral.cli.table_fit import block_lines
from feral.sync.errors import NotFoundError
from feral.sync.text import printable
from feral.sync.types import NodeId

from .peer_outcomes import pairing_line, pairing_outcome, removal_line, removal_outcome

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar

    from feral.node.links.peer import LinkResult
    from feral.node.node import Node

__all__ = ["sync"]


ELSEWHERE = {
    "cert": "feral.cli.sync.tls_commands:cert",
    "clock-reset": "feral.cli.sync.sync_plain_commands:clock_reset",
    "invite": "feral.cli.sync.invite_commands:invite",
    "join": "feral.cli.sync.invite_commands:join",
    "node-id": "feral.cli.sync.sync_plain_commands:node_id",
}
"""The ``sync`` commands kept in other modules, imported only when used (cli/lazy_group.py)."""


@click.group(cls=LazyGroup, lazy_subcommands=ELSEWHERE)
def sync() -> None:
    """See and steer sync with this node's peers."""


def _when(ms: int | None) -> str:
    if ms is None:
        return "never"
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).strftime("%Y-%m-%d %H:%MZ")


@sync.group(invoke_without_command=True)
@json_option("peers")
@click.pass_context
def peers(ctx: click.Context, as_json: bool) -> None:
    """List paired peers with their HLC lag; `peers add` and `peers remove` change them."""
    if ctx.invoked_subcommand is not None:
        return
    from feral.node.links.status import peer_rows

    home: Path = ctx.obj
    check_home(home)
    rows = with_node(home, peer_rows)
    if as_json:
        echo_json(rows)
        return
    echo_table(
        [
            (
                short_id(r["node_id"]),
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
    return "unknown" if ms is None else duration(ms)


@peers.command(name="add")
@click.argument("url", required=False)
@click.option("--node-id", "peer_id", required=True, help="The peer's id (feral sync node-id).")
@click.option(
    "--insecure-plaintext",
    is_flag=True,
    help="Allow a ws:// URL to another machine: the link is not encrypted.",
)
@json_option("the pairing and what it changed")
@pass_home
def peers_add(
    home: Path, url: str | None, peer_id: str, insecure_plaintext: bool, as_json: bool
) -> None:
    """Pair with a peer; without URL the peer may connect here but is never dialled.

    A wss:// URL is pinned to the peer's id (its certificate must hold that node's key).
    """
    from feral.node.home.identity import load_or_create_identity
    from feral.node.links.tls import plaintext_refusal
    from feral.node.settings.config import PeerSettings, load_settings, save_settings, with_peer

    me = load_or_create_identity(home)
    if peer_id == me.node_id:
        raise click.ClickException("that is this node's own id")
    refusal = plaintext_refusal(url) if url and not insecure_plaintext else None
    if refusal is not None:
        raise click.ClickException(refusal)
    settings = load_settings(home)
    peer = PeerSettings(NodeId(peer_id), url, insecure_plaintext)
    save_settings(home, with_peer(settings, peer))
    outcome = pairing_outcome(settings, peer)
    if as_json:
        echo_json(outcome)
    else:
        click.echo(pairing_line(outcome))


@peers.command(name="remove")
@click.argument("peer", metavar="ID|URL")
@json_option("the peers removed")
@pass_home
def peers_remove(home: Path, peer: str, as_json: bool) -> None:
    """Unpair a peer, by id or URL."""
    from feral.node.settings.config import load_settings, save_settings, without_peer

    settings = load_settings(home)
    updated = without_peer(settings, peer)
    save_settings(home, updated)
    outcome = removal_outcome(settings, updated)
    if as_json:
        echo_json(outcome)
    else:
        click.echo(removal_line(outcome))


async def _sync_round(node: Node, target: str | None, show_progress: bool) -> list[LinkResult]:
    import asyncio

    from feral.node.links.dial import dial

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
    # Each peer announces how many entries it will stream (docs/PROTOCOL.md §6): the bar's
    # length is the sum of what every peer announced so far, its position what has arrived.
    with click.progressbar(length=0, label="Syncing", file=sys.stderr, show_pos=True) as bar:
        parts: dict[NodeId, tuple[int, int]] = {}
        rounds = [
            dial(node, p, until_quiet=True, progress=_bar_part(bar, parts, p.node_id))
            for p in chosen
        ]
        return list(await asyncio.gather(*rounds))


def _bar_part(
    bar: ProgressBar[int], parts: dict[NodeId, tuple[int, int]], peer: NodeId
) -> Callable[[int, int], None]:
    """A link's progress callback, adding its ``(received, total)`` into the one bar."""

    def update(received: int, total: int) -> None:
        before = parts.get(peer, (0, 0))[0]
        parts[peer] = (received, total)
        bar.length = sum(t for _, t in parts.values())
        bar.update(received - before)

    return update


@sync.command()
@click.option("--peer", "target", metavar="ID|URL", help="Sync with this peer only.")
@json_option("results")
@pass_home
def now(home: Path, target: str | None, as_json: bool) -> None:
    """Run one sync round with every peer that has a URL; exit 1 if any failed."""
    import logging

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
            "ok": r.error is None and r.quiet and not r.diverged,
            "error": _round_error(r),
            "diverged": r.diverged,
            "by_snapshot": r.by_snapshot,
        }
        for r in results
    ]
    if as_json:
        echo_json(outcomes)
    else:
        for r, o in zip(results, outcomes, strict=True):
            state = "ok" if o["ok"] else f"failed: {o['error']}"
            how = " by snapshot" if r.by_snapshot else ""
            click.echo(f"{short_id(r.peer)}  received {count(r.received)} row(s){how}  {state}")
    failed = [o for o in outcomes if not o["ok"]]
    if failed:
        raise click.ClickException(f"sync with {failed[0]['peer']} failed: {failed[0]['error']}")


def _round_error(result: LinkResult) -> str | None:
    if result.error:
        return printable(result.error)
    if not result.quiet:
        return "the link closed before the round ended"
    if result.diverged:
        return (
            "diverged: both hold the same log entries by stamp but other rows (row digests "
            "differ; see feral sync status)"
        )
    return None


@sync.command()
@json_option("status")
@pass_home
def status(home: Path, as_json: bool) -> None:
    """This node's HLC and state digest; per peer reachability, lag, backlog, last error."""
    from feral.node.links.status import sync_status

    result = with_node(home, sync_status)
    if as_json:
        echo_json(result)
        return
    click.echo(f"node      {result['node_id']} ({result['name']})")
    click.echo(f"hlc       {result['hlc']} ({stamp(result['hlc'])})")
    click.echo(f"digest    {result['state_digest']}")
    click.echo(f"embedding {queue_line(result['embed_pending'])}")
    click.echo(f"conflicts {conflicts_line(result['conflicts'])}")
    if result["clock"]["warning"]:
        click.echo(f"CLOCK     {result['clock']['warning']}")
    alarms = result["integrity_alarms"]
    if alarms["count"]:
        latest = alarms["latest"]
        assert latest is not None  # a count above 0 has a latest entry
        click.echo(
            f"INTEGRITY {count(alarms['count'])} colliding entries received (latest from "
            f"{short_id(latest['peer'])}: {short_id(latest['origin'])} stamp {latest['hlc']}); "
            "kept ours, this node and its peers disagree"
        )
    now = result["now_ms"]
    rows = [status_cells(p, now) for p in result["peers"]]
    for line in block_lines(rows, STATUS_HEADERS) if rows else ["no peers (feral sync peers add)"]:
        click.echo(line)


@sync.command()
@click.option("--dry-run", is_flag=True, help="Say what would go; remove nothing.")
@json_option("prune")
@pass_home
def prune(home: Path, dry_run: bool, as_json: bool) -> None:
    """Collect log entries and tombstones every peer acknowledged, once older than
    sync.retention_days (a peer silent longer gets a snapshot instead)."""
    from feral.node.curation.prune import prune_now

    done = with_node(home, lambda node: prune_now(node, dry_run=dry_run))
    if as_json:
        echo_json(done)
        return
    verb = "would remove" if dry_run else "removed"
    click.echo(f"{verb} {done['prunable_entries']} log entries and "
               f"{done['prunable_tombstones']} tombstones; the log holds "
               f"{done['log_entries']} entries")  # fmt: skip
    oldest = done["oldest_unacknowledged_peer"]
    if isinstance(oldest, dict):
        state = "holds pruning back" if oldest["holds"] else "silent too long: gets a snapshot"
        click.echo(f"oldest unacknowledged peer: {oldest['name'] or oldest['node_id']} "
                   f"({oldest['lacking']} entries behind, {state})")  # fmt: skip
