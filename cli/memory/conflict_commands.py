"""``feral memory conflicts|resolve``: concurrent edits that last-write-wins set aside.

Named in the ``memory`` group's lazy map (cli/memory/memory_commands.py), so imported only when used
(and by ``sync`` for :func:`conflicts_line`); the work is node/curation/conflicts.py's, imported
inside each command.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from feral.cli.context import pass_home, with_node
from feral.cli.output import echo_json, json_option, shorten

if TYPE_CHECKING:  # the store: not for ``feral sync -h``, which imports conflicts_line
    from feral.storage.absorb.conflicts import ConflictRow

__all__ = ["conflicts_command", "conflicts_line", "resolve"]

_HIDDEN = ("id", "hlc", "origin", "deleted")


def conflicts_line(open_count: int) -> str:
    """``sync status``'s line: how many conflicts wait for a choice, and where to see them."""
    if not open_count:
        return "none"
    return f"{open_count} open (feral memory conflicts)"


def _changed(row: ConflictRow) -> list[str]:
    """The columns in which the values differ (what the user chooses between)."""
    values = row["values"]
    hidden = _HIDDEN + (("created_at",) if row["kind"] == "slot" else ())
    names = [name for name in values[0] if name not in hidden]
    return [name for name in names if len({repr(v.get(name)) for v in values}) > 1]


def _echo_conflict(row: ConflictRow) -> None:
    state = f"resolved, kept {row['kept']}" if row["resolved"] else "open"
    what = f"slot {row['slot']}" if row["kind"] == "slot" else f"{row['table']} {row['row_id']}"
    click.echo(f"{row['id']}  {what}  ({state})")
    for version, values in zip(row["versions"], row["values"], strict=True):
        mark = "live" if version == row["live"] else "    "
        shown = ", ".join(f"{name}={shorten(values[name], 40)}" for name in _changed(row))
        click.echo(f"  {mark} {version}  {shown}")


@click.command(name="conflicts")
@click.option("--all", "include_resolved", is_flag=True, help="Resolved conflicts too.")
@json_option("the conflict records")
@pass_home
def conflicts_command(home: Path, include_resolved: bool, as_json: bool) -> None:
    """List edits two devices made to one memory while apart, and single-valued slots (a
    subject's doctor, city, ...) that two devices set apart: every value to choose between,
    with its version, the live one marked (keep one with `memory resolve`)."""
    from feral.node.curation import conflicts

    rows = with_node(
        home, lambda node: conflicts.list_conflicts(node, include_resolved=include_resolved)
    )
    if as_json:
        echo_json(rows)
        return
    for row in rows:
        _echo_conflict(row)
    click.echo(f"{len(rows)} conflict(s)", err=True)


@click.command()
@click.argument("conflict_id", metavar="ID")
@click.option("--keep", "keep", required=True, metavar="VERSION", help="The version to keep.")
@json_option("the resolved record")
@pass_home
def resolve(home: Path, conflict_id: str, keep: str, as_json: bool) -> None:
    """Keep one value of a conflict: an edited memory's value is written again above every
    version, and the conflict marked resolved; a slot's other values are archived, superseded
    by the one kept. Either way on every device."""
    from feral.node.curation import conflicts

    row: Any = with_node(home, lambda node: conflicts.resolve(node, conflict_id, keep))
    if as_json:
        echo_json(row)
    else:
        click.echo(f"Resolved {row['id']}: kept {row['kept']}")
