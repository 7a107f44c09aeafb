"""``feral --help``, the command a newcomer types first, answered without importing click.

The console script starts here. Asked for the top-level help alone, on a terminal at least
:data:`WIDTH` columns wide (click wraps to that width, less two, then), it prints
:data:`TOP_HELP`: click's own rendering of the group's help, kept here as text, since importing
click and the group costs about 70 ms where the interpreter alone costs about 25
(tests/cli/test_fast_help.py holds the text to what click renders, so it cannot drift). Every
other command line, and a narrower terminal, goes to the click group (cli/main.py).
"""

from __future__ import annotations

import os
import sys

__all__ = ["TOP_HELP", "WIDTH", "main"]

WIDTH = 80
"""The widest rendering click gives: it wraps help to the terminal, at most 80 columns."""

TOP_HELP = """\
Usage: feral [OPTIONS] COMMAND [ARGS]...

  feral: a local-first memory store that keeps your devices in sync.

Options:
  --home DIRECTORY  The node's home folder (default ~/.feral; env FERAL_HOME);
                    also before the command.
  --version         Show the version and exit.
  -h, --help        Show this message and exit.

Commands:
  demo    Three devices: offline edits, then sync through a home server;...
  graph   Entities and the relations between them (stored as facts).
  init    Create the home, key pair and settings; print the node id.
  log     The execution log: tool calls an assistant made (insert-only,...
  mcp     Serve this home's memory to an MCP client over stdin/stdout.
  memory  Remember, search and manage memories.
  serve   Run this node: /sync for peers, the HTTP API, live sync with...
  sync    See and steer sync with this node's peers.
  wiki    A Markdown wiki of your memories, one page per topic, in...

  Example:
    feral --home ~/.feral memory search 'doctor'
"""
"""What click prints for ``feral --help`` at :data:`WIDTH` columns."""


def terminal_columns() -> int:
    """The terminal's width as click reads it (shutil.get_terminal_size: ``$COLUMNS`` first,
    then the terminal of standard output, else 80)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    stream = sys.__stdout__
    if stream is None:
        return 80
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (ValueError, OSError):
        return 80


def main() -> None:
    """Run ``feral``: the top-level help from :data:`TOP_HELP` where click would print the same
    (the command named ``feral``, as the text's usage line says)."""
    named = os.path.basename(sys.argv[0]) == "feral"
    if named and sys.argv[1:] in (["--help"], ["-h"]) and terminal_columns() >= WIDTH:
        sys.stdout.write(TOP_HELP)
        return
    from .main import cli

    cli()
