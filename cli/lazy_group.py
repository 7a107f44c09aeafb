"""Command groups that import a subcommand's module only when that subcommand is needed.

``feral memory remember`` should not pay for importing the sync server, the MCP server and the
wiki; ``feral --help`` should pay for none of them. A :class:`LazyGroup` knows its subcommands
by name and by where they live (``"module:attribute"``), and imports the module on the first
:meth:`get_command` of that name: the pattern click documents for lazily loaded subcommands.

A group's listing (its ``--help``) still loads every subcommand to read its short help, so the
command modules keep their own top level light: click, option constants, and the light
``feral.sync`` helpers; the node, the store and the models are imported inside the commands
(tests/cli/test_fast_help.py checks that ``feral --help`` imports none of them).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import click

from .context import FeralGroup

__all__ = ["LazyFeralGroup", "LazyGroup"]


class LazyGroup(click.Group):
    """A click group whose subcommands in ``lazy_subcommands`` are imported on first use.

    ``lazy_subcommands`` maps a command name to ``"module:attribute"``, the attribute being the
    command (or group) itself; the name must be the command's own name, so help reads the same
    as with the command added directly.
    """

    def __init__(
        self, *args: Any, lazy_subcommands: Mapping[str, str] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_subcommands = dict(lazy_subcommands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_subcommands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy_subcommands and cmd_name not in self.commands:
            self.add_command(self._load(cmd_name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def _load(self, cmd_name: str) -> click.Command:
        module_name, attribute = self.lazy_subcommands[cmd_name].split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):  # a wrong entry in the map: a bug here
            raise TypeError(f"{module_name}:{attribute} is not a click command")
        return command


class LazyFeralGroup(LazyGroup, FeralGroup):
    """The ``feral`` group itself: lazy subcommands, and the one error mapping (cli/context.py)."""
