"""How ``feral memory remember`` tells what the absorb pipeline did."""

from __future__ import annotations

from typing import Any

import click

from .output import echo_json

__all__ = ["echo_absorbed"]


def echo_absorbed(answer: dict[str, Any], as_json: bool) -> None:
    """The answer (node/absorb.py's ``Absorbed.as_dict``: the same whether this process or the
    running ``feral serve`` absorbed it) as JSON, or one line for the fact and one more per
    edge made, naming its type and the other end."""
    if as_json:
        echo_json(answer)
        return
    triple = f"{answer['subject']} / {answer['predicate']} / {answer['object']}"
    memory_id, classification = answer["memory_id"], answer["classification"]
    if classification == "duplicate":
        click.echo(f"Already remembered {memory_id}: {triple} (duplicate, nothing written)")
        return
    click.echo(f"Remembered {memory_id}: {triple}")
    if classification == "new":
        return
    click.echo(f"Classified {classification}:")
    for edge in answer["edges"]:
        archived = " (now archived)" if edge["type"] == "supersedes" else ""
        click.echo(f"  {edge['type']} {edge['to_id']}{archived}")
