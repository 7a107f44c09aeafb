"""The ``feral`` group: global options, the top-level commands, and the command groups.

The console script (``feral = "feral.cli.fast_help:main"``, which answers ``feral --help``
itself) and ``python -m feral.cli`` both run :data:`cli`. Errors become exit statuses in
cli/context.py's :class:`FeralGroup`.
"""

from __future__ import annotations

from pathlib import Path

import click

from .examples import add_examples
from .home import HOME_HELP, accept_home_everywhere
from .lazy_group import LazyFeralGroup

__all__ = ["cli"]


COMMANDS = {
    "demo": "feral.cli.demo:demo",
    "graph": "feral.cli.memory.graph_commands:graph_group",
    "init": "feral.cli.init_command:init",
    "log": "feral.cli.memory.log_commands:log_group",
    "mcp": "feral.cli.mcp_commands:mcp",
    "memory": "feral.cli.memory.memory_commands:memory",
    "serve": "feral.cli.serve:serve",
    "sync": "feral.cli.sync.sync_commands:sync",
    "wiki": "feral.cli.memory.wiki_commands:wiki",
}
"""The top-level commands and groups, each imported only when used (cli/lazy_group.py)."""
SUMMARIES = {
    "demo": "Three devices: offline edits, then sync through a home server; status and exports.",
    "graph": "Entities and the relations between them (stored as facts).",
    "init": "Create the home, key pair and settings; print the node id.",
    "log": "The execution log: tool calls an assistant made (insert-only, replicated).",
    "mcp": "Serve this home's memory to an MCP client over stdin/stdout.",
    "memory": "Remember, search and manage memories.",
    "serve": "Run this node: /sync for peers, the HTTP API, live sync with peers, until SIGINT "
    "or SIGTERM.",
    "sync": "See and steer sync with this node's peers.",
    "wiki": "A Markdown wiki of your memories, one page per topic, in HOME/wiki.",
}
"""The first paragraph of each one's help: what ``feral --help`` lists, without importing them
(tests/cli/test_fast_help.py holds each to the command's own)."""


@click.group(
    cls=LazyFeralGroup,
    lazy_subcommands=COMMANDS,
    lazy_summaries=SUMMARIES,
    context_settings={"help_option_names": ["-h", "--help"], "show_default": True},
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
    from feral.node.home.home_paths import default_home

    if ctx.obj is not None:  # a program running the CLI passed its schema (cli/context.py)
        ctx.meta["feral.store_schema"] = ctx.obj
    ctx.obj = home if home is not None else default_home()


accept_home_everywhere(cli)  # and each command as the lazy group loads it (cli/lazy_group.py)
add_examples(cli)  # an example under every command's help (cli/examples.py), likewise
