"""``feral memory export``: every replicated row as sorted JSON Lines.

Kept apart from import and ingest (cli/memory/memory_transfer_commands.py), whose module loads
the absorb pipeline, the transcript parsers and the secret scanner at its top: an export reads
the store and writes text, and a process that only exports should not pay for them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from feral.cli.context import pass_home, with_node

from .memory_commands import memory

__all__ = ["export"]


@memory.command()
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write to FILE."
)
@pass_home
def export(home: Path, output: Path | None) -> None:
    """Every replicated row as sorted JSON Lines (equal on nodes that are in sync)."""
    from feral.node.node import Node  # the store: only when the command runs

    lines = with_node(home, Node.export_lines)
    if output is None:
        sys.stdout.write("".join(lines))
        return
    try:
        _write_owner_only(output, "".join(lines))
    except OSError as exc:
        raise click.ClickException(f"cannot write {output}: {exc.strerror}") from exc


def _write_owner_only(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, creating it 0600: an export holds every memory in full.

    An existing file (or ``/dev/stdout``) is truncated and written in place, and keeps the
    mode its owner gave it.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
