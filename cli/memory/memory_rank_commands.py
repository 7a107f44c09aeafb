"""``feral memory boost|list|gc|distill``: importance, listing, and soft clean-up by scope.

Part of the ``memory`` group, loaded when used (cli/memory/memory_commands.py); the work is
node/curation/actions.py's.
"""

from __future__ import annotations

from pathlib import Path

import click

from feral.cli.context import pass_home, with_node
from feral.cli.output import echo_json, echo_table, json_option, shorten
from feral.node.curation import actions as curation
from feral.node.settings.bounds import MAX_EPISODES, MAX_IMPORTANCE
from feral.storage.memory.listing import LISTED_TIERS, STATUSES

from .scope_option import scope_option

__all__ = ["DEFAULT_LIST", "scope_option"]

DEFAULT_LIST = 50


@click.command()
@click.argument("row_id", metavar="ID")
@click.argument(
    "importance", type=click.FloatRange(0, MAX_IMPORTANCE, min_open=True), metavar="FACTOR"
)
@click.option("--reason", default="", help="Why it matters (kept beside the importance).")
@json_option("the memory's meta row")
@pass_home
def boost(home: Path, row_id: str, importance: float, reason: str, as_json: bool) -> None:
    """Set how much a memory counts in search: its score is multiplied by FACTOR (0 < FACTOR
    <= 10; 1 is the default, 2 doubles it, 0.5 halves it). Replicated to every device."""
    meta = with_node(home, lambda node: curation.boost(node, row_id, importance, reason))
    if as_json:
        echo_json(meta)
    else:
        click.echo(f"Boosted {row_id}: importance {meta['importance']:g}")


@click.command(name="list")
@click.option("--tier", type=click.Choice(tuple(LISTED_TIERS)), help="Only this tier.")
@scope_option("Only memories of this scope")
@click.option(
    "--status", type=click.Choice(STATUSES), default="active", show_default=True,
    help="superseded: archived rows a newer value replaced; archived includes them.",
)  # fmt: skip
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(1, MAX_EPISODES),
    default=DEFAULT_LIST,
    show_default=True,
    help="How many memories, newest first.",
)
@json_option("the memories")
@pass_home
def list_(
    home: Path, tier: str | None, scope: str | None, status: str, limit: int, as_json: bool
) -> None:
    """List memories, newest first (the same order on every device in sync)."""
    rows = with_node(
        home,
        lambda node: curation.list_memories(
            node, tier=tier, scope=scope, status=status, limit=limit
        ),
    )
    if as_json:
        echo_json(rows)
        return
    echo_table(
        [
            (
                r["id"],
                r["tier"],
                r["status"],
                r["meta"]["scope"],
                f"{r['meta']['importance']:g}",
                shorten(r["content"], 50),
            )
            for r in rows
        ],
        ("id", "tier", "status", "scope", "importance", "content"),
    )


@click.command()
@click.option(
    "--ttl-days", type=click.IntRange(0), default=curation.DEFAULT_TTL_DAYS, show_default=True,
    help="Archive session-scoped facts not updated for this many days.",
)  # fmt: skip
@click.option(
    "--compact-above", type=click.IntRange(1), default=curation.DEFAULT_COMPACT_ABOVE,
    show_default=True,
    help="Consolidate a subject and predicate with more live facts than this into one.",
)  # fmt: skip
@click.option("--dry-run", is_flag=True, help="Print what would be done; write nothing.")
@json_option("what was (or would be) done")
@pass_home
def gc(home: Path, ttl_days: int, compact_above: int, dry_run: bool, as_json: bool) -> None:
    """Archive stale session facts and consolidate crowded groups (soft: restore undoes it)."""
    report = with_node(
        home,
        lambda node: curation.run_gc(
            node, ttl_days=ttl_days, compact_above=compact_above, dry_run=dry_run
        ),
    )
    if as_json:
        echo_json(report)
        return
    verb = "Would archive" if dry_run else "Archived"
    for row in report["archived"]:
        click.echo(f"{verb} {row['id']}: {shorten(row['content'], 60)}")
    for group in report["groups"]:
        into = f" into {group['consolidated_id']}" if group["consolidated_id"] else ""
        click.echo(
            f"{'Would consolidate' if dry_run else 'Consolidated'} {len(group['members'])} "
            f"facts of {group['subject']} / {group['predicate']} ({group['scope']}){into}"
        )
    click.echo(f"{len(report['archived'])} archived, {len(report['groups'])} group(s)", err=True)


@click.command()
@click.option("--session", "session_id", required=True, help="The session whose facts to keep.")
@click.option("--dry-run", is_flag=True, help="Print what would be promoted; write nothing.")
@json_option("what was (or would be) promoted")
@pass_home
def distill(home: Path, session_id: str, dry_run: bool, as_json: bool) -> None:
    """Promote a session's facts to the user's scope, so gc keeps them."""
    report = with_node(home, lambda node: curation.distill(node, session_id, dry_run=dry_run))
    if as_json:
        echo_json(report)
        return
    verb = "Would promote" if dry_run else "Promoted"
    for row in report["promoted"]:
        click.echo(f"{verb} {row['id']}: {shorten(row['content'], 60)}")
    click.echo(f"{len(report['promoted'])} fact(s) from {report['scope']}", err=True)
