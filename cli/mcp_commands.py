"""``feral mcp``: the memory as an MCP server over stdio, for an assistant to start.

The server (node/mcp/server.py, on the ``mcp`` SDK) is imported when the command runs, so the
rest of the CLI starts without it.
"""

from __future__ import annotations

from pathlib import Path

import click

from .context import pass_home, with_node

__all__ = ["mcp"]


@click.command()
@pass_home
def mcp(home: Path) -> None:
    """Serve this home's memory to an MCP client over stdin/stdout.

    An assistant's MCP settings start it, e.g. command `feral`, arguments
    `--home ~/.feral mcp`. The home must exist (`feral init`). Several clients may
    run one each on the same home at once.
    """
    from feral.node.library.memory import require_home
    from feral.node.mcp.server import serve_stdio

    require_home(home)
    with_node(home, serve_stdio)
