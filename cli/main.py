"""The ``feral`` group: global options, the top-level commands, and the command groups.

The console script (``feral = "feral.cli.main:cli"``) and ``python -m feral.cli`` both run
:data:`cli`. Errors become exit statuses in cli/context.py's :class:`FeralGroup`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from feral.node.config import load_settings, save_settings
from feral.node.identity import load_or_create_identity
from feral.node.node import default_home

from . import (
    conflict_commands,
    demo,
    digest_commands,
    graph_commands,
    invite_commands,
    log_commands,
    mcp_commands,
    memory_commands,
    memory_graph_commands,
    memory_rank_commands,
    memory_transfer_commands,
    sync_commands,
    tls_commands,
    wiki_commands,
)
from .context import FeralGroup, pass_home

__all__ = ["cli"]


@click.group(cls=FeralGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="FERAL_HOME",
    default=None,
    help="The node's home folder (default ~/.feral; env FERAL_HOME).",
)
@click.version_option(package_name="feral")
@click.pass_context
def cli(ctx: click.Context, home: Path | None) -> None:
    """feral: a local-first memory store that keeps your devices in sync."""
    ctx.obj = home if home is not None else default_home()


@cli.command()
@click.option("--name", help="A name for this device, shown to its peers.")
@pass_home
def init(home: Path, name: str | None) -> None:
    """Create the home, key pair and settings; print the node id."""
    identity = load_or_create_identity(home)
    settings = load_settings(home)
    if name is not None or not (home / "settings.json").exists():
        if name is not None:
            settings = dataclasses.replace(settings, name=name)
        save_settings(home, settings)
    click.echo(identity.node_id)


cli.add_command(memory_commands.memory)
memory_transfer_commands.register()  # import, ingest, export join the memory group
memory_rank_commands.register(memory_commands.memory)
digest_commands.register(memory_commands.memory)
conflict_commands.register(memory_commands.memory)
memory_commands.memory.add_command(memory_graph_commands.link_command)
memory_commands.memory.add_command(memory_graph_commands.get)
cli.add_command(sync_commands.sync)
sync_commands.sync.add_command(invite_commands.invite)
sync_commands.sync.add_command(invite_commands.join)
sync_commands.sync.add_command(tls_commands.cert)
cli.add_command(wiki_commands.wiki)
cli.add_command(graph_commands.graph_group)
cli.add_command(demo.demo)
cli.add_command(log_commands.log_group)
cli.add_command(sync_commands.serve)
cli.add_command(mcp_commands.mcp)
