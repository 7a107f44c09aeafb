"""``python -m feral.cli``: the same as the ``feral`` command."""

from __future__ import annotations

from feral.cli.main import cli

__all__: list[str] = []

cli(prog_name="feral")
