"""Working memory for the sessions of one process, with each compaction stored as an episode.

:class:`~feral.node.assistant.working_memory.WorkingMemory` decides what to compact; this module
summarises the compacted messages (in a worker thread, since an LLM summariser blocks on the
network) and stores the summary through the node's ``add_episode``, so episodes replicate like any
write while the buffers stay in this process's RAM (DESIGN §2).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass

from feral.node.settings.config import MemorySettings
from feral.storage.db.rows import EpisodeRow

from .summarise import Summariser
from .working_memory import Message, WorkingMemory

__all__ = ["EpisodeHook", "EpisodeWriter", "IngestResult", "SessionMemory", "ingest"]

EpisodeWriter = Callable[[str, str, Sequence[str]], Awaitable[EpisodeRow]]
"""``Node.add_episode``-shaped: ``(session_id, summary, entities)`` to the stored row."""
EpisodeHook = Callable[[EpisodeRow, Sequence[Message]], Awaitable[None]]
"""Told each stored episode and the messages it summarises (ingest extracts facts there)."""


class SessionMemory:
    """One :class:`WorkingMemory` per session id, created on first use.

    Args:
        settings: the budget and trigger (``memory`` in settings.json).
        summariser: turns compacted messages into a summary.
        write_episode: stores an episode (``Node.add_episode``).
    """

    def __init__(
        self, settings: MemorySettings, summariser: Summariser, write_episode: EpisodeWriter
    ) -> None:
        self.settings = settings
        self.summariser = summariser
        self.write_episode = write_episode
        self.buffers: dict[str, WorkingMemory] = {}
        """Live buffers by session id."""
        self.on_episode: EpisodeHook | None = None

    def __len__(self) -> int:
        return len(self.buffers)

    def buffer(self, session: str) -> WorkingMemory:
        """The session's working memory (a new, empty one the first time)."""
        if session not in self.buffers:
            memory = self.settings
            self.buffers[session] = WorkingMemory(
                session, memory.working_memory_budget, memory.compaction_trigger
            )
        return self.buffers[session]

    async def add(self, session: str, role: str, content: str) -> list[EpisodeRow]:
        """Add a message; returns the episode rows written (one when it compacted, else none)."""
        evicted = self.buffer(session).add(role, content)
        return [await self._store(session, evicted)] if evicted else []

    async def flush(self, session: str | None = None) -> list[EpisodeRow]:
        """Compact what is left of ``session`` (default: every session) into episodes.

        Buffers holding nothing but the note write nothing. Returns the episode rows written.
        """
        names = [session] if session is not None else sorted(self.buffers)
        rows = []
        for name in names:
            evicted = self.buffer(name).flush()
            if evicted:
                rows.append(await self._store(name, evicted))
        return rows

    async def _store(self, session: str, messages: list[Message]) -> EpisodeRow:
        summary = await asyncio.to_thread(self.summariser.summarise, messages)
        episode = await self.write_episode(session, summary.text, summary.entities)
        if self.on_episode is not None:
            await self.on_episode(episode, messages)
        return episode


@dataclass(frozen=True)
class IngestResult:
    """What an ingest did."""

    messages: int
    episodes: int
    sessions: int
    facts: int = 0
    """Facts taken from users' messages (node/assistant/ingest_facts.py)."""


async def ingest(
    sessions: SessionMemory,
    messages: Iterable[Message],
    progress: Callable[[int], None] | None = None,
) -> IngestResult:
    """Stream ``messages`` through working memory, then flush every session's remainder.

    A transcript that ends leaves its last messages in the buffers, and the buffers die with the
    process, so each session's remainder becomes one final episode.
    """
    count = episodes = 0
    for message in messages:
        episodes += len(await sessions.add(message.session, message.role, message.content))
        count += 1
        if progress is not None:
            progress(1)
    episodes += len(await sessions.flush())
    return IngestResult(count, episodes, len(sessions))
