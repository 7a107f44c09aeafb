"""How ``feral memory remember`` tells what the absorb pipeline did."""

from __future__ import annotations

from collections.abc import Mapping

import click

from feral.cli.output import echo_json

__all__ = ["echo_absorbed", "echo_clause"]


def echo_absorbed(answer: Mapping[str, object], as_json: bool) -> None:
    """The answer (node/absorb/pipeline.py's ``Absorbed.as_dict``: the same whether this process or
    the running ``feral serve`` absorbed it) as JSON, or each clause's lines
    (:func:`echo_clause`).

    Read as a JSON object, not as the node's ``AbsorbedAnswer``: the running server's answer is
    JSON from another process, printed as it came, and only the keys the lines name are read.
    """
    if as_json:
        echo_json(answer)
        return
    for clause in _objects(answer.get("clauses")) or [answer]:
        echo_clause(clause)


def _objects(value: object) -> list[Mapping[str, object]]:
    """The JSON objects of a list in an answer (none if ``value`` is no list)."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def echo_clause(answer: Mapping[str, object]) -> None:
    """One line for the fact and one more per edge made, naming its type and the other end;
    what was merged (nothing written) or archived is named, with how to undo it."""
    triple = f"{answer['subject']} / {answer['predicate']} / {answer['object']}"
    memory_id, classification = answer["memory_id"], answer["classification"]
    if classification == "duplicate":
        click.echo(
            f"Already remembered {memory_id}: {triple} (duplicate, nothing written; "
            "--keep-both writes it beside)"
        )
        return
    click.echo(f"Remembered {memory_id}: {triple}")
    if classification == "new":
        return
    click.echo(f"Classified {classification}:")
    for edge in _objects(answer["edges"]):
        archived = ""
        if edge["type"] == "supersedes":
            archived = f" (now archived; `feral memory restore {edge['to_id']}` brings it back)"
        click.echo(f"  {edge['type']} {edge['to_id']}{archived}")
