"""``python -m feral.cli``: the same as the ``feral`` command."""

from feral.cli.main import cli

cli(prog_name="feral")
