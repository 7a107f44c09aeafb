"""The ``feral`` group: global options, error mapping, and the top-level commands."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from feral.node.config import load_settings, save_settings
from feral.node.identity import load_or_create_identity
from feral.node.node import Node, default_home
from feral.sync.errors import FeralError

__all__ = ["cli", "pass_home", "run", "with_node"]

T = TypeVar("T")


def _loop_factory(fast_loop: bool) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop for the long-running server where it is installed (not on Windows)."""
    if not fast_loop:
        return None
    try:
        import uvloop
    except ImportError:  # pragma: no cover - Windows
        return None
    return uvloop.new_event_loop


def run(coro: Awaitable[T], *, fast_loop: bool = False) -> T:
    """Run a coroutine to completion, turning every :class:`FeralError` into one line and exit 1."""
    try:
        with asyncio.Runner(loop_factory=_loop_factory(fast_loop)) as runner:
            return runner.run(_as_coroutine(coro))
    except FeralError as exc:
        raise click.ClickException(str(exc)) from exc


async def _as_coroutine(awaitable: Awaitable[T]) -> T:
    return await awaitable


def with_node(home: Path, fn: Callable[[Node], Awaitable[T]], *, serving: bool = False) -> T:
    """Open the node in ``home``, run ``fn`` on it, and always close it.

    ``serving`` is for the long-running server: uvloop, and an integrity check at start.
    """

    async def body() -> T:
        node = await Node.open(home, check=serving)
        try:
            return await fn(node)
        finally:
            await node.close()

    return run(body(), fast_loop=serving)


pass_home = click.make_pass_decorator(Path)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="FERAL_HOME",
    default=None,
    help="The node's home folder (default ~/.feral; env FERAL_HOME).",
)
@click.version_option(package_name="feral")
@click.pass_context
def cli(ctx: click.Context, home: Path | None) -> None:
    """feral: a local-first memory store that keeps your devices in sync."""
    ctx.obj = home if home is not None else default_home()


@cli.command()
@click.option("--name", help="A name for this device, shown to its peers.")
@pass_home
def init(home: Path, name: str | None) -> None:
    """Create the home, key pair and settings; print the node id."""
    try:
        identity = load_or_create_identity(home)
        settings = load_settings(home)
        if name is not None or not (home / "settings.json").exists():
            if name is not None:
                settings = dataclasses.replace(settings, name=name)
            save_settings(home, settings)
    except FeralError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(identity.node_id)


def _register() -> None:
    from . import demo, memory_commands, sync_commands, wiki_commands

    cli.add_command(memory_commands.memory)
    cli.add_command(sync_commands.sync)
    cli.add_command(wiki_commands.wiki)
    cli.add_command(demo.demo)
    cli.add_command(sync_commands.serve)


_register()


def main() -> Any:  # pragma: no cover - console entry point
    return cli(prog_name="feral", args=sys.argv[1:])
