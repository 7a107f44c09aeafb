"""Facts from what users say in a transcript (``feral memory ingest``), by the phrasing rules.

Only messages whose role is ``user`` count: an assistant saying "your doctor is Dr. Chen" is not the
user stating it. Each message is cut into sentences (a full stop after a title such as ``Dr.`` does
not end one) and each sentence into its clauses (node/absorb/clauses.py), each clause goes through
:func:`~feral.node.absorb.phrases.parse_fact`, and what becomes a triple is kept; what the rules can
only store as a note is left to the episode, which already holds the words. So "my sister's doctor
is Dr. Lee" gives ``user sister_doctor Dr. Lee``, never ``user doctor``. The facts are written when
the episode holding their message is stored, with that episode as their ``source_episode``, through
the absorb pipeline (node/absorb/absorb_batch.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from feral.node.absorb.clauses import clauses, sentences
from feral.node.absorb.phrases import NOTE, Triple, parse_fact
from feral.storage.db.rows import EpisodeRow

from .working_memory import Message

__all__ = ["FactExtractor", "USER_ROLE", "message_facts", "sentences"]

USER_ROLE = "user"

Writer = Callable[[str, list[list[Triple]]], Awaitable[int]]
"""``Node.remember_extracted``-shaped: ``(episode_id, facts per message)`` to a count."""


def message_facts(message: Message) -> list[Triple]:
    """The facts a user's message states, each once, in the order said (none for others)."""
    if message.role.strip().casefold() != USER_ROLE:
        return []
    facts: list[Triple] = []
    for sentence in sentences(message.content):
        for triple in map(parse_fact, clauses(sentence)):  # each clause alone: clauses.py
            if triple[1] != NOTE and triple not in facts:
                facts.append(triple)
    return facts


class FactExtractor:
    """Writes the facts of each stored episode's user messages; counts them."""

    def __init__(self, write: Writer) -> None:
        self.write = write
        self.facts = 0

    async def episode_stored(self, episode: EpisodeRow, messages: Sequence[Message]) -> None:
        groups = [facts for facts in map(message_facts, messages) if facts]
        if groups:
            self.facts += await self.write(episode["id"], groups)
