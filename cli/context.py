"""What every command shares: the home, running the node, and the one error mapping.

Kept apart from cli/main.py so the command modules import it and main.py names them for its
lazy group (cli/lazy_group.py): nothing imports main.py, and there is no import cycle. It
imports the node only inside the functions that open one, so that listing the commands does
not load the store.

Errors: every :class:`FeralError` that leaves a command reaches :class:`FeralGroup`, which
prints it as one line on stderr and exits with the kind's status in :data:`EXIT_STATUS` (DESIGN
§6: 1 a runtime error, 2 a usage error). The tree (sync/errors.py) says what went wrong; how
a command ends is the CLI's own, so it is mapped here, as the API maps HTTP statuses in
node/api/errors.py. Commands raise the error and never catch it to print it themselves.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, NoReturn, TypeVar

import click

from feral.sync.errors import FeralError, InvalidArgument

from .home import pass_home  # checked: never a silent new identity (cli/home.py)

if TYPE_CHECKING:
    import asyncio

    from feral.node.node import Node
    from feral.storage.db.migrations import Migration
    from feral.sync.schema import Schema

__all__ = [
    "EXIT_STATUS",
    "PROGRESS_FROM",
    "STORE_SCHEMA",
    "FeralGroup",
    "StoreSchema",
    "embed_written",
    "exit_status",
    "fail",
    "pass_home",
    "run",
    "store_schema",
    "with_node",
]

T = TypeVar("T")

PROGRESS_FROM = 2_000
"""Rows waiting to be embedded from which the end of a command shows a bar (on a terminal)."""

EXIT_STATUS: Final[Mapping[type[FeralError], int]] = MappingProxyType(
    {FeralError: 1, InvalidArgument: 2}
)
"""The exit status of a command that fails with each kind (DESIGN §6: 2 a usage error, 1 any
other refusal); a kind not named exits as its nearest ancestor that is (tests/cli/test_context.py
holds every kind of the tree to its status)."""


def exit_status(kind: type[FeralError]) -> int:
    """The exit status for a ``kind`` error: its own row, or its nearest ancestor's (the
    class's MRO), so a kind declared anywhere ends the command."""
    return next(EXIT_STATUS[cls] for cls in kind.__mro__ if cls in EXIT_STATUS)


class FeralGroup(click.Group):
    """The ``feral`` group: the one place a :class:`FeralError` becomes an exit status."""

    def main(  # one signature for both of click's overloads
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Click's own run, but a usage error is one line too (``Error: ... (see 'feral X -h')``)
        with exit 2, instead of the usage, a hint and the error over four lines."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            result = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:  # a bare group: its help
            exc.show()
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} -h')" if exc.ctx is not None else ""
            click.echo(f"Error: {' '.join(exc.format_message().split())}{hint}", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(result if isinstance(result, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except FeralError as exc:
            fail(ctx, exc)


def fail(ctx: click.Context, error: FeralError) -> NoReturn:
    """Print ``error`` on stderr and exit with its kind's status (:func:`exit_status`).

    The line reads as click's own errors do (``Error: ...``); a message over several lines is
    joined into one, so a caller reading stderr gets one line per failure (DESIGN §6).
    """
    message = " ".join(str(error).split("\n")) or type(error).__name__
    click.echo(f"Error: {message}", err=True)
    ctx.exit(exit_status(type(error)))


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
    """Run a coroutine to completion on a fresh event loop (uvloop with ``fast_loop``)."""
    import asyncio  # with its ssl: not for ``feral --help``

    with asyncio.Runner(loop_factory=_loop_factory(fast_loop)) as runner:
        return runner.run(_as_coroutine(coro))


async def _as_coroutine(awaitable: Awaitable[T]) -> T:
    return await awaitable


def _warn_if_ahead(node: Node) -> None:
    """After a command that wrote: one line on stderr if its stamps ran ahead of the clock."""
    from feral.node.clock_state import ahead_warning

    warning = ahead_warning(node.stamped_ahead_ms, node.settings.sync.max_clock_skew_ms)
    if warning:
        click.echo(f"Warning: {warning}", err=True)


@dataclass(frozen=True)
class StoreSchema:
    """The replicated schema a command opens its node's store with, and the migrations it
    needs: this release's unless a program that runs the CLI as a newer release passes its own
    as the root context's object (``cli.main(args, obj=StoreSchema(...))``; docs/PROTOCOL.md
    §10). The root command keeps it in the context's ``meta`` under :data:`STORE_SCHEMA`."""

    schema: Schema
    migrations: tuple[Migration, ...] = ()


STORE_SCHEMA = "feral.store_schema"
"""Where in ``meta`` the root command (cli/main.py) keeps the object it was given."""


def store_schema() -> StoreSchema | None:
    """The :class:`StoreSchema` the program running this command passed, if any."""
    ctx = click.get_current_context(silent=True)
    found = ctx.meta.get(STORE_SCHEMA) if ctx is not None else None
    return found if isinstance(found, StoreSchema) else None


def with_node(home: Path, fn: Callable[[Node], Awaitable[T]], *, serving: bool = False) -> T:
    """Open the node in ``home``, run ``fn`` on it, embed what it queued, and always close it.

    ``serving`` is for the long-running server: uvloop, an integrity check at start, and
    embedding in the background instead of at the end.
    """

    from feral.node.node import Node  # the store and the models: only a command that runs

    given = store_schema()
    schema, migrations = (given.schema, given.migrations) if given else (None, ())

    async def body() -> T:
        node = await Node.open(home, check=serving, schema=schema, migrations=migrations)
        try:
            result = await fn(node)
            _warn_if_ahead(node)
            if node.store.read_only is not None and not serving:  # a read answered all the same
                click.echo(f"! {node.store.read_only}; writes are refused", err=True)
            if not serving:
                await embed_written(node)
            return result
        finally:
            await node.close()

    return run(body(), fast_loop=serving)


async def embed_written(node: Node) -> None:
    """At the end of a command that wrote: embed what it queued, so its rows are searchable
    by meaning once it returns (its rows were committed, and found by full text, before).

    When a ``feral serve`` runs on the same home, the queue is left to it: the command returns
    at once, the server (woken by the commit) embeds with the model it has loaded, and the two
    processes never contend for the write lock over the same rows. A bar shows on a terminal
    when many rows wait; a quick command with a few rows just drains. A drain that fails (a
    full disk, a lock held too long) does not fail the command: what it wrote is committed.
    """
    from feral.node.embedding import serve_running

    if not node.embedding.woken or not node.embedding.active or serve_running(node.home):
        return
    waiting = await node.embedding.pending()
    if not waiting:
        return
    hidden = waiting < PROGRESS_FROM or not sys.stderr.isatty()
    bar = click.progressbar(length=waiting, label="Embedding", file=sys.stderr, hidden=hidden)
    try:
        with bar:
            await node.embed_queued(lambda done, total: bar.update(done - bar.pos))
    except FeralError as exc:  # the write stands; its rows stay queued for the next drain
        click.echo(f"note: embedding postponed, rows stay queued: {exc}", err=True)
