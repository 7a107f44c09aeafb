"""Working-memory sessions that live as long as the process serving them: messages come one at
a time (the MCP tool ``session_append``, ``Memory.append_message``), not as a whole transcript.

Compaction is the one ``feral memory ingest`` does (node/assistant/sessions.py,
node/assistant/working_memory.py): when a session's buffer passes its trigger, the oldest messages
are summarised into an episode, which replicates, and the facts users state in them become facts of
that episode (node/assistant/ingest_facts.py). The buffers themselves stay in this process's RAM
(DESIGN §2), so a session is one process's: two ``feral mcp`` processes each hold their own buffer
for a session of the same name. What is left in a buffer is not lost when the process ends:
:meth:`close` (called when the server or the ``Memory`` closes) compacts every remainder into an
episode, as ingest does at the end of a transcript; ``session_end`` does it for one session at once.

Each message is checked before it is buffered: its session id as ingest's transcripts check it,
a role among :data:`ROLES`, content that is text a row can hold, and no secret (the same scan
as every write: node/secrets/scan.py), so a refused message leaves the buffer as it was.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Literal

from msgspec import Meta, Struct

from feral.node.answers import SessionAppended, SessionEnded, SessionEpisode, SessionState
from feral.node.kernel import Kernel
from feral.node.secrets.scan import refuse_secrets
from feral.node.settings.limits import Text
from feral.storage.db.rows import EpisodeRow
from feral.sync.errors import InvalidInput

from .node_sessions import fact_extractor, open_sessions
from .working_memory import MAX_SESSION_BYTES, Message

__all__ = ["ROLES", "LiveSessions", "Role", "SessionMessage", "SessionName", "SessionRef"]

ROLES = ("user", "assistant", "system", "tool")
Role = Literal["user", "assistant", "system", "tool"]
SessionName = Annotated[str, Meta(min_length=1, max_length=MAX_SESSION_BYTES, pattern=r"\S")]
"""A session id, as an episode's ``session_id`` holds it (at most 256 characters)."""


class SessionMessage(Struct, frozen=True, forbid_unknown_fields=True):
    """One message to append: the session it belongs to, who said it, what was said."""

    session: SessionName
    role: Role
    content: Text


class SessionRef(Struct, frozen=True, forbid_unknown_fields=True):
    """A session, named."""

    session: SessionName


def _episode(row: EpisodeRow) -> SessionEpisode:
    return {"id": row["id"], "summary": row["summary"]}


class LiveSessions:
    """One process's working memory for the sessions its clients append to."""

    def __init__(self, node: Kernel) -> None:
        self.node = node
        self._extractor = fact_extractor(node)
        self._sessions = open_sessions(node)
        self._sessions.on_episode = self._extractor.episode_stored
        self._lock = asyncio.Lock()
        """One change at a time, so a session's episodes are written in the order said."""

    async def append(self, message: SessionMessage) -> SessionAppended:
        """Buffer ``message``; the episodes a compaction wrote (often none) and the buffer's
        state after it.

        Raises:
            SecretRefused: the content holds what looks like a secret (nothing is buffered).
        """
        if len(message.session.encode("utf-8")) > MAX_SESSION_BYTES:
            raise InvalidInput(f"session must be at most {MAX_SESSION_BYTES} bytes")
        refuse_secrets([message.content], "the message")
        async with self._lock:
            facts_before = self._extractor.facts
            written = await self._sessions.add(message.session, message.role, message.content)
            facts = self._extractor.facts - facts_before
        return SessionAppended(**self.state(message.session),
                               episodes=list(map(_episode, written)), facts=facts)  # fmt: skip

    def state(self, session: str) -> SessionState:
        """The session's buffer as a model would see it: the compaction note (if any), then the
        live messages, with the tokens they hold and the point past which compaction starts."""
        memory = self.node.settings.memory
        buffer = self._sessions.buffers.get(session)
        messages: list[Message] = buffer.messages() if buffer is not None else []
        return {
            "session": session,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "tokens": buffer.tokens if buffer is not None else 0,
            "compacts_above": int(memory.working_memory_budget * memory.compaction_trigger),
            "summarised": buffer.summarised if buffer is not None else 0,
        }

    def names(self) -> list[str]:
        """The sessions with a buffer in this process."""
        return sorted(self._sessions.buffers)

    async def end(self, session: str) -> SessionEnded:
        """Compact what is left of ``session`` into an episode now, and drop its buffer."""
        async with self._lock:
            facts_before = self._extractor.facts
            written = await self._sessions.flush(session)
            self._sessions.buffers.pop(session, None)
            facts = self._extractor.facts - facts_before
        return {"session": session, "episodes": list(map(_episode, written)), "facts": facts}

    async def close(self) -> int:
        """Compact every session's remainder into episodes (the process is ending): how many."""
        async with self._lock:
            written = await self._sessions.flush()
            self._sessions.buffers.clear()
        return len(written)
