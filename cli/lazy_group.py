"""Command groups that import a subcommand's module only when that subcommand is needed.

``feral memory remember`` should not pay for importing the sync server, the MCP server and the
wiki; ``feral --help`` should pay for none of them. A :class:`LazyGroup` knows its subcommands
by name and by where they live (``"module:attribute"``), and imports the module on the first
:meth:`get_command` of that name: the pattern click documents for lazily loaded subcommands.

A group's listing (its ``--help``) reads each subcommand's short help from ``lazy_summaries``
(the first paragraph of its help, kept beside its location) when one is given, so ``feral
--help`` imports no command module at all (tests/cli/test_fast_help.py checks that each summary
is the command's own). Without summaries, listing loads every subcommand to read its short help,
so the command modules keep their own top level light: click, option constants, and the light
``feral.sync`` helpers; the node, the store and the models are imported inside the commands.

What every command gets, ``--home`` after its name (cli/home.py) and an example under its help
(cli/examples.py), is given to each command as it is loaded, so it holds for the whole tree
without importing the whole tree.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import click

from .context import FeralGroup
from .examples import add_examples
from .home import accept_home

__all__ = ["LazyFeralGroup", "LazyGroup"]


class LazyGroup(click.Group):
    """A click group whose subcommands in ``lazy_subcommands`` are imported on first use.

    ``lazy_subcommands`` maps a command name to ``"module:attribute"``, the attribute being the
    command (or group) itself; the name must be the command's own name, so help reads the same
    as with the command added directly.
    """

    def __init__(
        self,
        *args: Any,
        lazy_subcommands: Mapping[str, str] | None = None,
        lazy_summaries: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_subcommands = dict(lazy_subcommands or {})
        self.lazy_summaries = dict(lazy_summaries or {})
        """The first paragraph of each lazy subcommand's help, for the listing."""
        self._dressed: set[str] = set()
        self.tree_path = f"feral {self.name}"
        """This group's path from ``feral`` (``feral memory``): where its commands' examples
        are found (cli/examples.py); set again by the group that loads it."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_subcommands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy_subcommands and cmd_name not in self.commands:
            self.add_command(self._load(cmd_name), cmd_name)
        command = super().get_command(ctx, cmd_name)
        if command is not None and cmd_name not in self._dressed:
            # also a command its module added to this group beside the one asked for
            self._dress(command, f"{self.tree_path} {cmd_name}")
            self._dressed.add(cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Click's listing of the subcommands, with a summary standing in for each command not
        loaded yet (a command made of its summary gives the same short help at any width)."""
        listed: list[tuple[str, click.Command]] = []
        for name in self.list_commands(ctx):
            summary = self.lazy_summaries.get(name)
            loaded = name in self.commands or summary is None
            command = self.get_command(ctx, name) if loaded else click.Command(name, help=summary)
            if command is not None and not command.hidden:
                listed.append((name, command))
        if listed:
            limit = formatter.width - 6 - max(len(name) for name, _ in listed)
            with formatter.section("Commands"):
                formatter.write_dl([(name, c.get_short_help_str(limit)) for name, c in listed])

    @staticmethod
    def _dress(command: click.Command, tree_path: str) -> None:
        """What the CLI gives every command, done as each is loaded rather than over the whole
        tree at start-up (which would import every module): ``--home`` after its name
        (cli/home.py) and an example under its help (cli/examples.py)."""
        if isinstance(command, LazyGroup):
            command.tree_path = tree_path
        accept_home(command)
        add_examples(command, tree_path)

    def _load(self, cmd_name: str) -> click.Command:
        module_name, attribute = self.lazy_subcommands[cmd_name].split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):  # a wrong entry in the map: a bug here
            raise TypeError(f"{module_name}:{attribute} is not a click command")
        return command


class LazyFeralGroup(LazyGroup, FeralGroup):
    """The ``feral`` group itself: lazy subcommands, and the one error mapping (cli/context.py)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tree_path = "feral"
