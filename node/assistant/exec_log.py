"""The execution log written from outside Python: record a tool call, list and search the log.

``feral log`` (cli/memory/log_commands.py) and ``POST /api/exec-log`` (node/api/exec_log_routes.py)
both call these functions, so a call recorded either way is the same row. Recording goes through
:meth:`Node.log_execution`, which refuses an entry holding what looks like a secret (in its
session, tool, arguments or result) before anything is stored. Arguments and results are any
JSON values; they are stored as JSON text with sorted keys (storage/memory/memories.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from msgspec import Meta, Struct

from feral.node.settings.limits import (
    DEFAULT_LOG_LIMIT,
    DEFAULT_SESSION,
    MAX_LATENCY_MS,
    MAX_LOG_LIMIT,
    Text,
)
from feral.node.settings.validation import JsonRefused, parse_json
from feral.storage.db.rows import ExecutionRow
from feral.storage.memory.exec_log_reads import list_executions, search_executions
from feral.sync.errors import InvalidInput

if TYPE_CHECKING:  # the node and its store: not for a CLI listing its commands
    from feral.node.kernel import Kernel

__all__ = [
    "DEFAULT_LOG_LIMIT",
    "DEFAULT_SESSION",
    "MAX_LATENCY_MS",
    "MAX_LOG_LIMIT",
    "LogQuery",
    "ToolCall",
    "json_argument",
    "list_tool_calls",
    "record_tool_call",
    "search_tool_calls",
]


Session = Annotated[str, Meta(min_length=1, max_length=256, pattern=r"\S")]
Latency = Annotated[int, Meta(ge=0, le=MAX_LATENCY_MS)]
JsonValue = Annotated[Any, Meta(description="any JSON value")]
"""What JSON decodes to; msgspec checks nothing more, so neither does the schema."""


class ToolCall(Struct, frozen=True, forbid_unknown_fields=True):
    """One tool call to log: the body of ``POST /api/exec-log``."""

    tool: Text
    session: Session = DEFAULT_SESSION
    args: JsonValue = None
    """Any JSON value: what the tool was called with (``null``: none given)."""
    result: JsonValue = None
    """Any JSON value: what the tool answered."""
    latency_ms: Latency = 0
    success: bool = True


class LogQuery(Struct, frozen=True, forbid_unknown_fields=True):
    """Which logged calls to read: of one session or all, containing ``query`` or not (the
    MCP tool ``log_list``, ``Memory.tool_calls``)."""

    session: Session | None = None
    query: Text | None = None
    limit: Annotated[int, Meta(ge=1, le=MAX_LOG_LIMIT)] = DEFAULT_LOG_LIMIT


def json_argument(option: str, text: str | None) -> object:
    """An option's text as a JSON value (``None`` when the option was not given).

    Raises:
        InvalidInput: the text is not JSON; the message names the option.
    """
    if text is None:
        return None
    try:
        return parse_json(text.encode("utf-8", "surrogatepass"))
    except JsonRefused as exc:
        raise InvalidInput(f"{option} is not JSON: {exc}") from exc


async def record_tool_call(node: Kernel, call: ToolCall) -> ExecutionRow:
    """Append ``call`` to the log (SecretRefused if it holds a secret): the stored row."""
    return await node.log_execution(
        call.session,
        call.tool,
        args=call.args,
        result=call.result,
        latency_ms=call.latency_ms,
        success=call.success,
    )


async def list_tool_calls(
    node: Kernel, *, session: str | None = None, limit: int = DEFAULT_LOG_LIMIT
) -> list[ExecutionRow]:
    """The newest calls first (of one session, or of all)."""
    return await node.store.read(list_executions, session_id=session, limit=limit)


async def search_tool_calls(
    node: Kernel, query: str, *, session: str | None = None, limit: int = DEFAULT_LOG_LIMIT
) -> list[ExecutionRow]:
    """Calls whose tool, arguments or result contain ``query``
    (storage/memory/exec_log_reads.py)."""
    return await node.store.read(search_executions, query, session_id=session, limit=limit)
