"""The assistant's half of ``from feral import Memory`` (node/library/memory.py): the digest, the
execution log, working-memory sessions, boost and link.

Each method checks its arguments with the structures the MCP tools and the HTTP API check them
with (so the limits are the same everywhere) and answers with the same shapes.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

from feral.node.answers import (
    DigestAnswer,
    EdgeRow,
    MetaAnswer,
    SessionAppended,
    SessionEnded,
    SessionState,
)
from feral.node.assistant import exec_log
from feral.node.assistant.exec_log import DEFAULT_LOG_LIMIT, DEFAULT_SESSION, LogQuery, ToolCall
from feral.node.assistant.live_sessions import LiveSessions, SessionMessage, SessionRef
from feral.node.curation import actions as curation
from feral.node.curation.memory_graph import link
from feral.node.node import Node
from feral.node.recall.digest import DigestRequest, build_digest
from feral.node.settings.validation import Invalid, convert
from feral.storage.db.rows import ExecutionRow
from feral.sync.errors import InvalidInput

__all__ = ["AssistantMethods", "checked"]

T = TypeVar("T")
S = TypeVar("S")


def checked(type_: type[S], **arguments: object) -> S:
    """The arguments as ``type_`` (those left as ``None`` take its defaults).

    Raises:
        InvalidInput: one does not fit; the message names it.
    """
    given = {key: value for key, value in arguments.items() if value is not None}
    try:
        return convert(given, type_, top="the arguments")
    except Invalid as exc:
        raise InvalidInput(str(exc)) from None


class AssistantMethods:
    """Mixed into :class:`~feral.node.library.memory.Memory`, which provides the three below."""

    _sessions: LiveSessions | None = None

    @property
    def node(self) -> Node:
        raise NotImplementedError

    def _call(self, work: Coroutine[Any, Any, T]) -> T:
        raise NotImplementedError

    def digest(
        self, topic: str | None = None, *, max_tokens: int | None = None, scope: str | None = None
    ) -> DigestAnswer:
        """The prompt digest, as ``feral memory digest --json`` prints it: the
        ``<memory-context>`` block in ``text`` (memories relevant to ``topic``, open TODOs,
        the last 48 hours, within ``max_tokens``: default 800) and what went into it."""
        body = checked(DigestRequest, topic=topic, max_tokens=max_tokens, scope=scope)
        work = build_digest(self.node, topic=body.topic, max_tokens=body.max_tokens,
                            scope=body.scope)  # fmt: skip
        return self._call(work).as_dict()

    def log_tool_call(
        self,
        tool: str,
        *,
        session: str = DEFAULT_SESSION,
        args: object = None,
        result: object = None,
        latency_ms: int = 0,
        success: bool = True,
    ) -> ExecutionRow:
        """Record one tool call in the execution log (``args`` and ``result``: any JSON
        value); the stored entry, as ``feral log record --json`` prints it. An entry holding
        what looks like a secret is refused (SecretRefused), and nothing is stored."""
        call = checked(ToolCall, tool=tool, session=session, args=args, result=result,
                       latency_ms=latency_ms, success=success)  # fmt: skip
        return self._call(exec_log.record_tool_call(self.node, call))

    def tool_calls(
        self,
        query: str | None = None,
        *,
        session: str | None = None,
        limit: int = DEFAULT_LOG_LIMIT,
    ) -> list[ExecutionRow]:
        """The logged calls, newest first (of one session, or all); with ``query``, those
        whose tool, arguments or result contain it (``feral log list`` / ``search``)."""
        body = checked(LogQuery, session=session, query=query, limit=limit)
        if body.query is None:
            return self._call(exec_log.list_tool_calls(self.node, session=body.session,
                                                       limit=body.limit))  # fmt: skip
        work = exec_log.search_tool_calls(self.node, body.query, session=body.session,
                                          limit=body.limit)  # fmt: skip
        return self._call(work)

    @property
    def sessions(self) -> LiveSessions:
        """This memory's working-memory sessions, made on first use."""
        if self._sessions is None:
            self._sessions = LiveSessions(self.node)
        return self._sessions

    def append_message(self, session: str, role: str, content: str) -> SessionAppended:
        """Append a message to a working-memory session (role user, assistant, system or
        tool). Past the session's trigger its oldest messages are summarised into an episode,
        as ``feral memory ingest`` does; ``episodes`` lists what that wrote."""
        message = checked(SessionMessage, session=session, role=role, content=content)
        return self._call(self.sessions.append(message))

    def session_messages(self, session: str) -> SessionState:
        """The session's working memory as a model would see it: the compaction note (if
        any), then the live messages, with their tokens."""
        return self.sessions.state(checked(SessionRef, session=session).session)

    def end_session(self, session: str) -> SessionEnded:
        """Summarise what is left of ``session`` into an episode now (closing the memory does
        it for every session)."""
        return self._call(self.sessions.end(checked(SessionRef, session=session).session))

    def boost(self, memory_id: str, importance: float, reason: str = "") -> MetaAnswer:
        """Set a memory's importance multiplier (above 0, at most 10) and say why."""
        return self._call(curation.boost(self.node, memory_id, importance, reason))

    def link(self, from_id: str, to_id: str, edge_type: str, note: str = "") -> EdgeRow:
        """Link two memories with a typed edge (``related_to``, ``contradicts``, ...); the
        same link again writes nothing new."""
        return self._call(link(self.node, from_id, to_id, edge_type, note))
