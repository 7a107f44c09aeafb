"""The home a command runs on: ``--home`` anywhere on the line, and never a silent new identity.

DESIGN §6 (0.2): options may follow the command, ``--home`` included, and a missing home is an
error, never a fresh identity made on the spot. A mistyped ``--home`` used to create a new node
there (a new key, an empty database) and answer as if nothing were wrong; now every command but
``feral init`` refuses a folder that holds no node, and says when the key alone is gone.

Kept free of feral.node at import time (the CLI imports its modules lazily): the file names
come from node/ inside the check, which runs only when a command does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

import click

from feral.sync.errors import NotFoundError

__all__ = ["accept_home", "accept_home_everywhere", "check_home", "pass_home", "pass_new_home"]

Given = ParamSpec("Given")
"""What click passes a command: its options and arguments, the home coming first."""
Answer = TypeVar("Answer")

HOME_HELP = "The node's home folder (default ~/.feral; env FERAL_HOME); also before the command."


def check_home(home: Path) -> None:
    """Refuse ``home`` unless it holds a node: its key file.

    Raises:
        NotFoundError: no folder, or a folder without a key ("no feral home at X; run `feral
            init`"); or a folder whose database is there but whose key is gone (the identity
            is lost: a new key would be another node, so nothing makes one silently).
    """
    from feral.node.home.home_paths import DATABASE_FILE, KEY_FILENAME

    if (home / KEY_FILENAME).is_file():
        return
    if (home / DATABASE_FILE).exists():
        raise NotFoundError(
            f"the key of the feral home at {home} is lost ({home / KEY_FILENAME} is missing): "
            f"restore it from a backup; without it this device's identity is gone"
        )
    raise NotFoundError(f"no feral home at {home}; run `feral init`")


def _current_home() -> Path:
    home = click.get_current_context().find_object(Path)
    if home is None:  # pragma: no cover - the root group always sets one
        raise click.UsageError("no home chosen")
    return home


def pass_home(command: Callable[Concatenate[Path, Given], Answer]) -> Callable[Given, Answer]:
    """Hand a command its home (``--home``, env ``FERAL_HOME`` or ``~/.feral``), once checked
    to hold a node (:func:`check_home`)."""

    @functools.wraps(command)
    def wrapper(*args: Given.args, **kwargs: Given.kwargs) -> Answer:
        home = _current_home()
        check_home(home)
        return command(home, *args, **kwargs)

    return wrapper


def pass_new_home(
    command: Callable[Concatenate[Path, Given], Answer],
) -> Callable[Given, Answer]:
    """Hand a command its home unchecked: for ``feral init``, the one command that makes one."""

    @functools.wraps(command)
    def wrapper(*args: Given.args, **kwargs: Given.kwargs) -> Answer:
        return command(_current_home(), *args, **kwargs)

    return wrapper


def _set_home(ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
    """``--home`` given after a command name: it replaces the one given (or implied) before."""
    if value is not None:
        ctx.obj = value


def _home_option() -> click.Option:
    return click.Option(
        ["--home"],
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        expose_value=False,
        is_eager=True,
        callback=_set_home,
        help=HOME_HELP,
        show_default=False,
    )


def accept_home_everywhere(group: click.Group) -> None:
    """Give every command and group under ``group`` its own ``--home`` option.

    Click parses a group's options before it makes its subcommand's context, which copies the
    group's object; so the home chosen last on the line is the one the command gets.
    """
    for command in group.commands.values():
        accept_home(command)


def accept_home(command: click.Command) -> None:
    """Give ``command`` and every command under it their ``--home`` (once: a second call adds
    none). A lazy group calls it on each command it loads (cli/lazy_group.py)."""
    if not any(param.name == "home" for param in command.params):
        command.params.append(_home_option())
    if isinstance(command, click.Group):
        accept_home_everywhere(command)
