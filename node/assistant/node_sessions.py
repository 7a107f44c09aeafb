"""Working memory on a node: sessions whose episodes the node stores, and whose users' facts
become facts of those episodes through the absorb pipeline (node/absorb/absorb_batch.py).

``feral memory ingest`` streams a whole transcript through fresh sessions
(:func:`ingest_transcript`); live sessions (node/assistant/live_sessions.py) take one message at
a time. Both are made here, from the node they write to, seen as its features see it
(node/kernel.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from feral.node.absorb.absorb_batch import absorb_groups
from feral.node.absorb.phrases import Triple
from feral.node.kernel import Kernel
from feral.node.secrets.scan import screened_messages

from .ingest_facts import FactExtractor
from .sessions import IngestResult, SessionMemory, ingest
from .summarise import summariser_for
from .working_memory import Message

__all__ = ["fact_extractor", "ingest_transcript", "open_sessions", "remember_extracted"]


def open_sessions(node: Kernel) -> SessionMemory:
    """Working memory for sessions (DESIGN §2): in this process's RAM, episodes replicate."""
    memory = node.settings.memory
    return SessionMemory(memory, summariser_for(memory), node.add_episode)


async def remember_extracted(node: Kernel, episode_id: str, groups: list[list[Triple]]) -> int:
    """Remember facts taken from an episode's messages (node/assistant/ingest_facts.py), through
    the absorb pipeline (node/absorb/absorb_batch.py)."""
    return await absorb_groups(node, episode_id, groups)


def fact_extractor(node: Kernel) -> FactExtractor:
    """What writes the facts users state in each stored episode's messages, into ``node``."""
    return FactExtractor(lambda episode_id, groups: remember_extracted(node, episode_id, groups))


async def ingest_transcript(
    node: Kernel, messages: Iterable[Message], progress: Callable[[int], None] | None = None
) -> IngestResult:
    """Stream a transcript through fresh working memory; every remainder is flushed, and
    the facts users state become facts of the episodes they are in. A message holding a
    secret is refused when reached (the CLI screens every line first)."""
    extractor = fact_extractor(node)
    sessions = open_sessions(node)
    sessions.on_episode = extractor.episode_stored
    result = await ingest(sessions, screened_messages(messages), progress)
    return dataclasses.replace(result, facts=extractor.facts)
