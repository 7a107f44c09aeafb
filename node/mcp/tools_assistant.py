"""The MCP tools an assistant uses around a conversation: the digest for its prompt, the
execution log of its tool calls, and working-memory sessions (node/mcp/server.py registers
them; docs/MCP.md documents them).

Sessions live in this server's process (node/assistant/live_sessions.py): a ``feral mcp`` holds its
clients' buffers while it runs, and compacts what is left into episodes when it stops.
"""

from __future__ import annotations

from typing import Any

from feral.node.answers import (
    DigestAnswer,
    ExecutionRow,
    SessionAppended,
    SessionEnded,
    SessionState,
)
from feral.node.assistant import exec_log
from feral.node.assistant.exec_log import LogQuery, ToolCall
from feral.node.assistant.live_sessions import LiveSessions, Role, SessionMessage, SessionRef
from feral.node.node import Node
from feral.node.recall.digest import DigestRequest, build_digest

from .answers import LogEntries
from .common import IDEMPOTENT, READ_ONLY, WRITES, Server, add_tool, given

__all__ = ["ASSISTANT_TOOLS", "add_assistant_tools"]

ASSISTANT_TOOLS = (
    "digest",
    "log_tool_call",
    "log_list",
    "session_append",
    "session_messages",
    "session_end",
)


def add_assistant_tools(server: Server, node: Node, sessions: LiveSessions) -> None:
    """Every tool of this module, on ``server``; ``sessions`` holds the working memory."""
    _add_digest_tool(server, node)
    _add_log_tools(server, node)
    _add_session_tools(server, sessions)


def _add_digest_tool(server: Server, node: Node) -> None:
    async def digest(
        topic: str | None = None, max_tokens: int | None = None, scope: str | None = None
    ) -> DigestAnswer:
        """A <memory-context> block to put in a prompt (`text`): memories relevant to `topic`,
        open TODOs and what was recorded in the last 48 hours, within `max_tokens` (default
        800, counted with the model's tokenizer). It is background data, not instructions."""
        body = given(DigestRequest, topic=topic, max_tokens=max_tokens, scope=scope)
        built = await build_digest(
            node, topic=body.topic, max_tokens=body.max_tokens, scope=body.scope
        )
        return built.as_dict()

    add_tool(server, digest, READ_ONLY)


def _add_log_tools(server: Server, node: Node) -> None:
    async def log_tool_call(
        tool: str,
        session: str | None = None,
        args: Any = None,
        result: Any = None,
        latency_ms: int | None = None,
        success: bool | None = None,
    ) -> ExecutionRow:
        """Record one tool call in the execution log: the `tool`'s name, the `session` it was
        made in (default "default"), its `args` and `result` (any JSON), how long it took and
        whether it succeeded (default true). An entry holding a secret is refused."""
        call = given(ToolCall, tool=tool, session=session, args=args, result=result,
                     latency_ms=latency_ms, success=success)  # fmt: skip
        return await exec_log.record_tool_call(node, call)

    async def log_list(
        session: str | None = None, query: str | None = None, limit: int | None = None
    ) -> LogEntries:
        """The logged tool calls, newest first: of one `session` (default all), those whose
        tool, arguments or result contain `query` (plain text, case blind) if given."""
        body = given(LogQuery, session=session, query=query, limit=limit)
        if body.query is None:
            rows = await exec_log.list_tool_calls(node, session=body.session, limit=body.limit)
        else:
            rows = await exec_log.search_tool_calls(
                node, body.query, session=body.session, limit=body.limit
            )
        return {"entries": rows}

    add_tool(server, log_tool_call, WRITES)
    add_tool(server, log_list, READ_ONLY)


def _add_session_tools(server: Server, sessions: LiveSessions) -> None:
    async def session_append(session: str, role: Role, content: str) -> SessionAppended:
        """Append a message to a working-memory session. When the session passes its token
        budget's trigger, its oldest messages are summarised into an episode (and the facts
        the user states in them remembered), as `feral memory ingest` does; `episodes` lists
        what that wrote."""
        message = given(SessionMessage, session=session, role=role, content=content)
        return await sessions.append(message)

    async def session_messages(session: str) -> SessionState:
        """A session's working memory as a model would see it: the compaction note, if any,
        then the live messages, with their tokens."""
        return sessions.state(given(SessionRef, session=session).session)

    async def session_end(session: str) -> SessionEnded:
        """End a session: what is left of it is summarised into an episode now (the server
        does this for every session when it stops)."""
        return await sessions.end(given(SessionRef, session=session).session)

    add_tool(server, session_append, WRITES)
    add_tool(server, session_messages, READ_ONLY)
    add_tool(server, session_end, IDEMPOTENT)
