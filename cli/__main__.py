"""``python -m cli``: the same as the ``feral`` command."""

from cli.main import cli

cli(prog_name="feral")
