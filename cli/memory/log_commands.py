"""``feral log ...``: record tool calls in the execution log, list them, search them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from feral.cli.context import pass_home, with_node
from feral.cli.output import duration, echo_json, echo_table, json_option, shorten
from feral.node.settings.bounds import (
    DEFAULT_LOG_LIMIT,
    DEFAULT_SESSION,
    MAX_LATENCY_MS,
    MAX_LOG_LIMIT,
)

if TYPE_CHECKING:
    from feral.storage.db.rows import ExecutionRow

__all__ = ["log_group"]


def utc_stamp(ms: int) -> str:
    """A moment in UTC, to the minute, as tables show it: ``2026-12-01 15:04Z`` (``--json``
    keeps the milliseconds)."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%MZ")


_session_filter = click.option("--session", help="Only calls of this session.")
_limit_option = click.option(
    "-n",
    "--limit",
    type=click.IntRange(1, MAX_LOG_LIMIT),
    default=DEFAULT_LOG_LIMIT,
    show_default=True,
    help="How many entries, newest first.",
)


def _echo_entries(rows: list[ExecutionRow], as_json: bool) -> None:
    if as_json:
        echo_json(rows)
        return
    echo_table(
        [
            (
                utc_stamp(r["created_at"]),
                shorten(r["session_id"], 10),
                shorten(r["tool"], 14),
                "ok" if r["success"] else "FAILED",
                duration(r["latency_ms"]),
                shorten(r["args"], 12),
            )
            for r in rows
        ],
        ("when (UTC)", "session", "tool", "result", "latency", "args"),
    )


@click.group("log")
def log_group() -> None:
    """The execution log: tool calls an assistant made (insert-only, replicated)."""


@log_group.command()
@click.argument("tool")
@click.option(
    "--session", default=DEFAULT_SESSION, show_default=True, help="The session it was made in."
)
@click.option("--args", "args_json", metavar="JSON", help="What the tool was called with (JSON).")
@click.option("--result", "result_json", metavar="JSON", help="What the tool answered (JSON).")
@click.option(
    "--latency-ms",
    type=click.IntRange(0, MAX_LATENCY_MS),
    default=0,
    show_default=True,
    help="How long the call took, in milliseconds.",
)
@click.option("--failed", is_flag=True, help="The call failed (default: it succeeded).")
@json_option("the stored entry")
@pass_home
def record(
    home: Path,
    tool: str,
    session: str,
    args_json: str | None,
    result_json: str | None,
    latency_ms: int,
    failed: bool,
    as_json: bool,
) -> None:
    """Log one call of TOOL in the execution log.

    Example: feral log record search --session s1 --args '{"q": "tea"}' --latency-ms 12

    An entry holding what looks like a secret is refused, and nothing is stored.
    """
    from feral.node.assistant import exec_log
    from feral.node.assistant.exec_log import ToolCall, json_argument

    if not tool.strip():
        raise click.UsageError("TOOL must not be empty")
    call = ToolCall(
        tool=tool,
        session=session,
        args=json_argument("--args", args_json),
        result=json_argument("--result", result_json),
        latency_ms=latency_ms,
        success=not failed,
    )
    row = with_node(home, lambda node: exec_log.record_tool_call(node, call))
    if as_json:
        echo_json(row)
    else:
        click.echo(f"Logged {row['id']}")


@log_group.command("list")
@_session_filter
@_limit_option
@json_option("the entries")
@pass_home
def list_command(home: Path, session: str | None, limit: int, as_json: bool) -> None:
    """The newest calls first.

    Example: feral log list --session s1 -n 5
    """
    from feral.node.assistant import exec_log

    rows = with_node(
        home, lambda node: exec_log.list_tool_calls(node, session=session, limit=limit)
    )
    _echo_entries(rows, as_json)


@log_group.command()
@click.argument("query")
@_session_filter
@_limit_option
@json_option("the entries")
@pass_home
def search(home: Path, query: str, session: str | None, limit: int, as_json: bool) -> None:
    """Calls whose tool, arguments or result contain QUERY (plain text, case blind), newest first.

    Example: feral log search tea
    """
    from feral.node.assistant import exec_log

    if not query.strip():
        raise click.UsageError("QUERY must not be empty")
    rows = with_node(
        home, lambda node: exec_log.search_tool_calls(node, query, session=session, limit=limit)
    )
    _echo_entries(rows, as_json)
