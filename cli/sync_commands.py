"""``feral sync ...``: this node's identity and its peers."""

from __future__ import annotations

from pathlib import Path

import click

from node.identity import load_or_create_identity
from sync.errors import FeralError

from .main import pass_home

__all__ = ["sync"]


@click.group()
def sync() -> None:
    """See and steer sync with this node's peers."""


@sync.command(name="node-id")
@pass_home
def node_id(home: Path) -> None:
    """Print this node's id (the fingerprint of its public key), one line."""
    try:
        click.echo(load_or_create_identity(home).node_id)
    except FeralError as exc:
        raise click.ClickException(str(exc)) from exc
