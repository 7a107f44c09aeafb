"""The ``--scope`` option of the memory commands, kept apart so that a module using it (and
``feral --help``, which loads them all) imports no store for it: the scope is checked by
node/settings/scopes.py, imported when a value is given."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

__all__ = ["scope_option"]

F = TypeVar("F", bound=Callable[..., object])
"""A command function, handed back as it came with an option added (click keeps the option
beside it)."""


def _scope(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A malformed scope is bad input (one line, exit 1), raised while the command parses."""
    if value is None:
        return None
    from feral.node.settings.scopes import check_scope

    return check_scope(value)


def scope_option(what: str) -> Callable[[F], F]:
    """``--scope``: ``user``, ``agent:NAME`` or ``session:ID``, checked as click parses it."""
    return click.option("--scope", callback=_scope, help=f"{what}: user, agent:NAME or session:ID.")
