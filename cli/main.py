"""The ``feral`` group: global options, the top-level commands, and the command groups.

The console script (``feral = "feral.cli.main:cli"``) and ``python -m feral.cli`` both run
:data:`cli`. Errors become exit statuses in cli/context.py's :class:`FeralGroup`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from .context import pass_home
from .lazy_group import LazyFeralGroup

__all__ = ["cli"]


COMMANDS = {
    "demo": "feral.cli.demo:demo",
    "graph": "feral.cli.graph_commands:graph_group",
    "log": "feral.cli.log_commands:log_group",
    "mcp": "feral.cli.mcp_commands:mcp",
    "memory": "feral.cli.memory_commands:memory",
    "serve": "feral.cli.sync_commands:serve",
    "sync": "feral.cli.sync_commands:sync",
    "wiki": "feral.cli.wiki_commands:wiki",
}
"""The top-level commands and groups, each imported only when used (cli/lazy_group.py)."""


@click.group(
    cls=LazyFeralGroup,
    lazy_subcommands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
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
    from feral.node.node import default_home

    ctx.obj = home if home is not None else default_home()


@cli.command()
@click.option("--name", help="A name for this device, shown to its peers.")
@pass_home
def init(home: Path, name: str | None) -> None:
    """Create the home, key pair and settings; print the node id."""
    from feral.node.config import load_settings, save_settings
    from feral.node.identity import load_or_create_identity

    identity = load_or_create_identity(home)
    settings = load_settings(home)
    if name is not None or not (home / "settings.json").exists():
        if name is not None:
            settings = dataclasses.replace(settings, name=name)
        save_settings(home, settings)
    click.echo(identity.node_id)
