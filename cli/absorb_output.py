"""How ``feral memory remember`` tells what the absorb pipeline did."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from feral.node.absorb import Absorbed

__all__ = ["echo_absorbed"]


def echo_absorbed(answer: Absorbed) -> None:
    """One line for the fact; one more per edge made, naming its type and the other end."""
    row = answer.row
    triple = f"{row['subject']} / {row['predicate']} / {row['object']}"
    if answer.classification == "duplicate":
        click.echo(f"Already remembered {answer.memory_id}: {triple} (duplicate, nothing written)")
        return
    click.echo(f"Remembered {answer.memory_id}: {triple}")
    if answer.classification == "new":
        return
    click.echo(f"Classified {answer.classification}:")
    for edge in answer.edges:
        archived = " (now archived)" if edge["type"] == "supersedes" else ""
        click.echo(f"  {edge['type']} {edge['to_id']}{archived}")
