"""The absorb pipeline in bulk: ``feral memory import`` and the facts ``ingest`` extracts.

Each fact is classified and written by the rules :func:`~feral.node.absorb.pipeline.absorb` uses, in
order, so a line is compared with the lines before it as well as with what was stored: a
repeat (or the same value of its slot) writes nothing, a new value of a single-valued slot
supersedes the old one behind a ``supersedes`` edge, an opposite is linked by ``contradicts``.

What differs from ``remember`` is that a bulk write never waits for the model: embedding stays
off its write path (node/embedding.py), so the rows are queued and embedded afterwards as
before, and a fact is compared with the stored ones as a row still waiting for its vector is,
by its words (a near-duplicate needs a word overlap of
:data:`~feral.node.absorb.classify.QUEUED_OVERLAP`); ``related_to`` edges, which need vectors, are
``remember``'s. The LLM classifier is never asked (one request per line of a large file would
make an import as slow as the endpoint).

The secret scan runs before any of this (the callers refuse or skip lines holding secrets).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import TYPE_CHECKING

from feral.node.write_turns import WriteTurns
from feral.storage.absorb.absorb_store import Outcome
from feral.storage.db.connection import Connection
from feral.storage.memory.memories import Stamp
from feral.storage.memory.memory_model import add_edge
from feral.sync.types import NodeId

from .absorb_fact import Fact
from .classify import decide, keep_both
from .phrases import Triple

if TYPE_CHECKING:
    from feral.node.kernel import Kernel

__all__ = ["TRANSACTION", "Absorbed", "Notice", "absorb_groups", "absorb_many"]

TRANSACTION = 50
"""Facts classified and written per transaction. Each is read against the store before it is
written (about 3 ms of CPU a fact), so a bulk insert's 5,000 rows in one transaction would hold
the write lock for many seconds, past another process's busy timeout; 50 keep it short."""


@dataclass(frozen=True)
class Notice:
    """A fact of a bulk write that wrote nothing (merged into ``row_id``) or archived rows
    (``archived``): ``index`` is its place among the facts given, from 0."""

    index: int
    classification: str
    row_id: str
    archived: tuple[str, ...] = ()


@dataclass
class Absorbed:
    """What a bulk did: how many facts were written, and each classification's count."""

    written: int = 0
    classifications: Counter[str] = field(default_factory=Counter)
    ids: list[str] = field(default_factory=list)
    """The row holding each fact, in order (a duplicate's is the stored row's)."""
    notices: list[Notice] = field(default_factory=list)
    """Every fact merged into a stored row or superseding one, in order."""

    def add(self, outcomes: Sequence[Outcome]) -> None:
        for outcome in outcomes:
            kind = outcome.decision.classification
            self.classifications[kind] += 1
            self.written += kind != "duplicate"
            row_id = str(outcome.row["id"])
            if kind == "duplicate" or outcome.decision.supersedes:
                archived = outcome.decision.supersedes
                self.notices.append(Notice(len(self.ids), kind, row_id, archived))
            self.ids.append(row_id)

    def extend(self, later: Absorbed) -> None:
        """Add what a later bulk did (its notices' indexes counted on from this one's)."""
        offset = len(self.ids)
        self.written += later.written
        self.classifications += later.classifications
        self.ids += later.ids
        self.notices += [replace(n, index=n.index + offset) for n in later.notices]


async def absorb_many(
    node: Kernel,
    triples: Sequence[Triple],
    *,
    source_episode: str | None = None,
    progress: Callable[[int], None] | None = None,
    keep: bool = False,
) -> Absorbed:
    """Classify and write ``triples`` in order, :data:`TRANSACTION` per transaction (they are
    validated and scanned already); ``progress`` gets each transaction's count once written;
    ``keep`` (``import --keep-both``) writes what would be merged or superseded beside it."""
    result = Absorbed()
    common: set[str] = (
        set()
    )  # words found common, not counted again (storage/absorb/word_neighbours.py)
    facts = [Fact((t[0].strip(), t[1].strip(), t[2].strip()), None, None, source_episode, common)
             for t in triples]  # fmt: skip
    turns = WriteTurns(node.home)  # a serve beside the bulk keeps its turns (node/write_turns.py)
    for start in range(0, len(facts), TRANSACTION):
        chunk = facts[start : start + TRANSACTION]
        write = node.write(_absorb_chunk, chunk, keep, now_ms=node.now_ms())
        result.add(await turns.run(write))
        await node.after_write()
        if progress:
            progress(len(chunk))
    return result


def _absorb_chunk(
    conn: Connection,
    origin: NodeId,
    stamp: Stamp,
    facts: Sequence[Fact],
    keep: bool,
    *,
    now_ms: int,
) -> list[Outcome]:
    """Each fact read, decided and written in turn, in the caller's one transaction (a later
    fact's read sees what the earlier ones wrote)."""
    outcomes = []
    for fact in facts:
        found = fact.candidates_of(conn)
        decision = decide(found)
        if keep:
            decision = keep_both(decision, found.triple)
        outcomes.append(fact.write(conn, origin, stamp, found, decision, now_ms=now_ms))
    return outcomes


async def absorb_groups(node: Kernel, episode_id: str, groups: Sequence[Sequence[Triple]]) -> int:
    """The facts of an episode's messages (one group per message), through the pipeline, with
    the episode as their ``source_episode``; the rows holding one message's facts are linked
    pairwise by ``co_extracted`` edges (a duplicate's stored row included). Returns how many
    facts the groups hold (repeats included)."""
    flat = [triple for group in groups for triple in group]
    absorbed = await absorb_many(node, flat, source_episode=episode_id)
    pairs: list[tuple[str, str]] = []
    at = 0
    for group in groups:
        ids = sorted(set(absorbed.ids[at : at + len(group)]))
        at += len(group)
        pairs += combinations(ids, 2)
    if pairs:
        await node.commit(_link_pairs, pairs, now_ms=node.now_ms())
    return len(flat)


def _link_pairs(
    conn: Connection, origin: NodeId, stamp: Stamp, pairs: list[tuple[str, str]], *, now_ms: int
) -> None:
    for first, second in pairs:
        add_edge(conn, origin, stamp, "co_extracted", first, second, now_ms=now_ms)
