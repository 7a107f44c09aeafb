"""``feral graph ...``: name entities, relate them, list them and walk the relations.

Entities are ``TYPE:NAME`` (``place:Berlin``); a relation is stored as an ordinary fact
``FROM RELATION TO`` (node/recall/graph.py), so it syncs, searches and exports like every fact.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from feral.storage.memory.graph_limits import DIRECTIONS, MAX_HOPS, MAX_RESULTS
from feral.sync.errors import InvalidInput

if TYPE_CHECKING:  # the answers' types: not for a CLI listing its commands
    from feral.node.recall.answers_graph import GraphEntity, GraphStep

from feral.cli.context import pass_home, with_node
from feral.cli.output import echo_json, echo_table, json_option, shorten

__all__ = ["graph_group"]


@click.group(name="graph")
def graph_group() -> None:
    """Entities and the relations between them (stored as facts)."""


@graph_group.command()
@click.argument("words", nargs=-1, required=True)
@click.option(
    "--relation",
    "is_relation",
    is_flag=True,
    help="Relate two entities: FROM_TYPE:FROM RELATION TO_TYPE:TO.",
)
@json_option("the stored row")
@pass_home
def add(home: Path, words: tuple[str, ...], is_relation: bool, as_json: bool) -> None:
    """Name an entity: TYPE NAME (e.g. place Berlin); with --relation, relate two:
    FROM_TYPE:FROM RELATION TO_TYPE:TO (e.g. person:Sam lives_in place:Berlin).

    A relation is remembered as the fact FROM RELATION TO, and both entities are named."""
    from feral.node.recall import graph

    if is_relation:
        if len(words) != 3:
            raise InvalidInput("--relation takes FROM_TYPE:FROM RELATION TO_TYPE:TO")
        source, relation, target = words
        row: dict[str, Any] = dict(
            with_node(home, lambda node: graph.relate(node, source, relation, target))
        )
        line = f"{row['subject']}  {row['predicate']}  {row['object']}  ({row['id']})"
    else:
        if len(words) != 2:
            raise InvalidInput("graph add takes TYPE NAME (quote a name with spaces)")
        row = dict(with_node(home, lambda node: graph.add_entity(node, *words)))
        line = f"{row['type']}:{row['name']}  ({row['id']})"
    if as_json:
        echo_json(row)
    else:
        click.echo(line)


@graph_group.command(name="list")
@click.option("--type", "entity_type", help="Only entities of this type.")
@json_option("the entities")
@pass_home
def list_(home: Path, entity_type: str | None, as_json: bool) -> None:
    """Every entity with its attributes; two values of a one-value attribute are both shown
    and marked as conflicting."""
    from feral.node.recall import graph

    rows = with_node(home, lambda node: graph.list_graph(node, entity_type))
    if as_json:
        echo_json(rows)
        return
    table = [
        (
            row["type"],
            shorten(row["name"], 32),
            row["relations"],
            shorten(_attributes(row), 60),
            ", ".join(row["conflicting"]),
        )
        for row in rows
    ]
    echo_table(table, ("type", "name", "relations", "attributes", "conflicting"))


def _attributes(row: GraphEntity) -> str:
    return "; ".join(f"{k}: {' | '.join(v)}" for k, v in row["attributes"].items())


@graph_group.command()
@click.option("--start", required=True, help="Where to start: TYPE:NAME (e.g. place:Berlin).")
@click.option(
    "--relation", "relations", multiple=True, help="Follow only this relation (repeatable)."
)
@click.option(
    "--direction",
    type=click.Choice(DIRECTIONS),
    default="outbound",
    show_default=True,
    help="outbound: FROM to TO; inbound: TO back to FROM; both.",
)
@click.option(
    "--hops",
    type=click.IntRange(1, MAX_HOPS),
    default=1,
    show_default=True,
    help="How many relations to follow from the start.",
)
@click.option(
    "--limit",
    type=click.IntRange(1, MAX_RESULTS),
    default=MAX_RESULTS,
    show_default=True,
    help="At most this many entities reached.",
)
@json_option("the traversal")
@pass_home
def query(
    home: Path,
    start: str,
    relations: tuple[str, ...],
    direction: str,
    hops: int,
    limit: int,
    as_json: bool,
) -> None:
    """The entities reachable from --start within --hops relations, nearest first."""
    from feral.node.recall import graph

    answer = with_node(
        home,
        lambda node: graph.query_graph(
            node, start, relations=relations, direction=direction, hops=hops, limit=limit
        ),
    )
    if as_json:
        echo_json(answer)
        return
    table = [
        (row["hops"], f"{row['type']}:{row['name']}", _via(row["via"])) for row in answer["results"]
    ]
    echo_table(table, ("hops", "entity", "via"))


def _via(via: GraphStep) -> str:
    arrow = "->" if via["direction"] == "outbound" else "<-"
    return f"{arrow} {via['subject']} {via['predicate']} {via['object']}"
