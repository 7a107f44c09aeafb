"""The ``feral`` group: global options, the top-level commands, and the command groups.

The console script (``feral = "feral.cli.main:cli"``) and ``python -m feral.cli`` both run
:data:`cli`. Errors become exit statuses in cli/context.py's :class:`FeralGroup`.
"""

from __future__ import annotations

from pathlib import Path

import click

from feral.node.node import default_home

from . import (
    conflict_commands,
    demo,
    digest_commands,
    graph_commands,
    init_command,
    invite_commands,
    log_commands,
    mcp_commands,
    memory_commands,
    memory_graph_commands,
    memory_rank_commands,
    memory_transfer_commands,
    sync_commands,
    sync_plain_commands,
    tls_commands,
    wiki_commands,
)
from .context import FeralGroup
from .examples import add_examples
from .home import HOME_HELP, accept_home_everywhere

__all__ = ["cli"]


@click.group(
    cls=FeralGroup, context_settings={"help_option_names": ["-h", "--help"], "show_default": True}
)
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="FERAL_HOME",
    default=None,
    help=HOME_HELP,
)
@click.version_option(package_name="feral")
@click.pass_context
def cli(ctx: click.Context, home: Path | None) -> None:
    """feral: a local-first memory store that keeps your devices in sync."""
    ctx.obj = home if home is not None else default_home()


cli.add_command(init_command.init)
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
sync_commands.sync.add_command(sync_plain_commands.node_id)
sync_commands.sync.add_command(sync_plain_commands.clock_reset)
cli.add_command(wiki_commands.wiki)
cli.add_command(graph_commands.graph_group)
cli.add_command(demo.demo)
cli.add_command(log_commands.log_group)
cli.add_command(sync_commands.serve)
cli.add_command(mcp_commands.mcp)
accept_home_everywhere(cli)  # last: every command above takes --home after its name
add_examples(cli)  # an example under every command's help (cli/examples.py)
