"""One fact on its way through the absorb pipeline, and what is made for it before the write.

Before the write transaction: what was said is checked and made triples (:class:`Said`), the
new texts are embedded (:func:`embed_facts`: a model never runs inside a transaction) and the
vectors the node holds are brought up to date (:func:`held_vectors`). Inside it, in a straight
line, the caller reads a :class:`Fact`'s candidates (:meth:`Fact.candidates_of`), decides
(node/absorb/classify.py) and writes the decision (:meth:`Fact.write`); storage never calls back.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from feral.node.secrets.scan import refuse_secrets, refuse_triple
from feral.storage.absorb.absorb_store import (
    Candidates,
    Decision,
    HeldVectors,
    NewVector,
    Outcome,
    read_candidates,
    write_outcome,
)
from feral.storage.db.connection import Connection
from feral.storage.memory.memories import Stamp
from feral.storage.vectors.vectors import pack_vector
from feral.sync.errors import InvalidInput
from feral.sync.types import NodeId

from .classify import fact_text, same_values
from .clauses import parse_facts
from .fact_rules import category_of, is_single_valued, opposite, slot
from .fact_values import about_slot
from .phrases import Triple, parse_fact

if TYPE_CHECKING:
    from feral.node.kernel import Kernel

__all__ = ["Fact", "Said", "embed_facts", "held_vectors", "prepare_triple", "scan_text"]


def scan_text(texts: list[str]) -> None:
    """The scan step: refuse what must never be stored, before anything is read or written.

    The secret scan (node/secrets/scan.py): a refusal raises
    :class:`~feral.node.secrets.scan.SecretRefused`, whose message names the kind, never the value.
    """
    refuse_secrets(texts)


@dataclass(frozen=True)
class Said:
    """What a person said, validated, scanned and made triples: one per clause of a text ("I
    live in Lisbon now and my dentist is Dr. Silva" says two facts), or the triple given.

    Made by :meth:`of` before anything is read or written, and before a node is opened at all when
    the caller has yet to open one (node/absorb/pipeline.py's :func:`absorbing`): a refused fact
    leaves the home as it was, even one whose database is not made yet."""

    triples: tuple[Triple, ...]

    @classmethod
    def of(cls, text: str | None, triple: Triple | None) -> Said:
        """Check ``text`` or ``triple`` (exactly one) and parse it.

        Raises:
            InvalidInput: neither or both given, or an empty part.
            SecretRefused: it holds what looks like a secret.
        """
        if text is not None and triple is None and text.strip():
            scan_text([text])
            return cls(tuple(parse_facts(text)))
        return cls((prepare_triple(text, triple),))


def prepare_triple(text: str | None, triple: Triple | None) -> Triple:
    """Validate and scan the input, and make it a triple (phrasing rules for a text).

    Raises:
        InvalidInput: neither or both given, or an empty part.
    """
    if (text is None) == (triple is None):
        raise InvalidInput("give a text or a triple, not both")
    if triple is not None:
        parts = tuple(part.strip() for part in triple)
        if not all(parts):
            raise InvalidInput("subject, predicate and object must not be empty")
        checked = (parts[0], parts[1], parts[2])
        refuse_triple(checked)  # also reads "predicate is object": user / wifi_password / x
        return checked
    assert text is not None
    if not text.strip():
        raise InvalidInput("the text is empty")
    scan_text([text])
    return parse_fact(text)


async def embed_facts(node: Kernel, texts: list[str]) -> list[NewVector | None]:
    """The texts' vectors, made now in one call on a worker thread (``None`` each with no model,
    or a database that takes no writes, which has no vectors to compare with either)."""
    embedder = node.embedder
    if embedder is None or not node.embedding.active or not texts:
        return [None] * len(texts)
    vectors = await asyncio.to_thread(embedder.embed, texts)
    return [
        NewVector(embedder, t, v, node.embedding.index) for t, v in zip(texts, vectors, strict=True)
    ]


async def held_vectors(node: Kernel, vectors: list[NewVector | None]) -> HeldVectors | None:
    """The vectors held in memory, current (a stale copy loads here, not in the write)."""
    held = node.embedding.index
    if held is not None and any(v is not None for v in vectors):
        await node.store.read(held.refresh)
    return held


@dataclass(frozen=True)
class Fact:
    """One fact on its way through the pipeline: what classify reads it with, and its meta."""

    triple: Triple
    vector: NewVector | None
    held: HeldVectors | None
    source_episode: str | None = None
    common_words: set[str] | None = None
    """Words a bulk write found common so far, shared by its facts (not counted again)."""

    @property
    def words(self) -> str:
        return fact_text(*self.triple)

    @property
    def category(self) -> str | None:
        """The category its meta row records; ``None`` for a note, which needs no meta row:
        the defaults say the same (category note, updated when created), and one row per note
        is what replicates."""
        category = category_of(self.triple[1], self.triple[2])
        return None if category == "note" else category

    def candidates_of(self, conn: Connection) -> Candidates:
        """The read: what is stored near this fact (storage/absorb/absorb_store.py)."""
        subject, predicate, obj = self.triple
        name = slot(predicate) if is_single_valued(slot(predicate)) else about_slot(predicate)
        slot_predicates = [name, f"{name}_name", *same_values(name)] if name is not None else []
        vector = self.vector
        packed = pack_vector(vector.values, vector.embedder.dim) if vector is not None else None
        held = self.held if packed is not None else None
        return read_candidates(
            conn,
            self.triple,
            slot_predicates,
            opposite(predicate),
            self.words,
            packed,
            held,
            self.common_words,
        )

    def write(
        self,
        conn: Connection,
        origin: NodeId,
        stamp: Stamp,
        found: Candidates,
        decision: Decision,
        *,
        now_ms: int,
    ) -> Outcome:
        """The write: ``decision``, made on ``found`` (read in this same transaction)."""
        return write_outcome(
            conn,
            origin,
            stamp,
            found.triple,
            decision,
            category=self.category,
            now_ms=now_ms,
            vector=self.vector,
            source_episode=self.source_episode,
        )
