"""``feral memory link`` and ``feral memory get``: typed edges and a memory's history."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import click

from feral.cli.context import pass_home, with_node
from feral.cli.output import echo_json, json_option, shorten
from feral.node.answers import Followed
from feral.node.curation.memory_graph import FOLLOW_MODES, Follow, follow, link
from feral.storage.memory.memory_model import EDGE_TYPES

__all__ = ["get", "link_command"]


@click.command(name="link")
@click.argument("from_id", metavar="FROM")
@click.argument("to_id", metavar="TO")
@click.option(
    "--type", "edge_type", type=click.Choice(EDGE_TYPES), required=True, help="The kind of edge."
)
@click.option("--note", default="", help="Why they are linked (kept with the edge).")
@json_option("the edge")
@pass_home
def link_command(
    home: Path, from_id: str, to_id: str, edge_type: str, note: str, as_json: bool
) -> None:
    """Link memory FROM to memory TO with a typed edge (replicated; the same link is one row)."""
    edge = with_node(home, lambda node: link(node, from_id, to_id, edge_type, note))
    if as_json:
        echo_json(edge)
    else:
        click.echo(f"Linked {edge['from_id']} {edge['type']} {edge['to_id']} ({edge['id']})")


def _describe(row: Mapping[str, object]) -> str:
    if "predicate" in row:
        text = f"{row['subject']} / {row['predicate']} / {row['object']}"
    else:
        text = str(row.get("summary", row.get("tool", "")))
    state = "archived" if row.get("archived") else "live"
    return f"{row['id']}  {shorten(text, 60)}  [{state}]"


def _echo_followed(result: Followed) -> None:
    click.echo(_describe(result["record"]))
    for edge in result.get("edges", []):
        click.echo(f"  edge  {edge['from_id']} {edge['type']} {edge['to_id']}")
    for older in result.get("history", []):
        click.echo(f"  superseded  {_describe(older)}  by {older['superseded_by']}")
    if result["conflicting"]:
        ids = ", ".join(result["current_values"])
        click.echo(f"  conflicting current values: {ids}")


@click.command()
@click.argument("row_id", metavar="ID")
@click.option(
    "--follow",
    "mode",
    type=click.Choice(FOLLOW_MODES),
    default="none",
    show_default=True,
    help="edges: the memory's edges too; full_history: and every version it superseded.",
)
@json_option("the record, and what --follow adds")
@pass_home
def get(home: Path, row_id: str, mode: Follow, as_json: bool) -> None:
    """Show a memory; flags a single-valued slot holding several live values as conflicting."""
    result = with_node(home, lambda node: follow(node, row_id, mode))
    if as_json:
        echo_json(result)
    else:
        _echo_followed(result)
