"""The absorb pipeline, the path of every ``remember``: validate → scan → classify → write.

1. **validate**: the text (or each part of a triple) must hold something besides white space.
2. **scan**: text that must never be stored (a secret) is refused before anything is read or
   written (:class:`~feral.node.absorb.absorb_fact.Said`, node/secrets/scan.py); a command that has
   yet to open its node checks first (:func:`absorbing`), so a refusal leaves the home as it was.
3. **classify**: the phrasing rules (node/absorb/phrases.py) make the text a triple and give it a
   category (node/absorb/fact_rules.py); the new text is embedded at once with the node's embedder
   (before the write transaction: a model never runs inside one), and node/absorb/classify.py
   compares it with what is stored (storage/absorb/absorb_store.py reads the candidates). The
   nearest stored facts come from the vectors the node holds in memory
   (storage/vectors/vector_index.py: loaded once, kept in step with every vector written, loaded
   again before the write transaction if stale).
4. **write**: in the same transaction as the candidates were read, read → decide → write in
   one straight sequence (:func:`_absorb_in_scope`; storage never calls back): the fact, its
   meta row, superseded facts archived, the edges (``supersedes``, ``contradicts``,
   ``related_to``), and the vector made in step 3, so the embedding queue does not embed the
   text again.

The answer is :class:`Absorbed`: ``{"status": "absorbed", "memory_id", "classification",
"edges_created", "duplicates_merged"}``, with ``edges`` (the edges written) and the stored
fact's own fields besides. ``duplicates_merged`` counts stored facts the text was merged into
(1 for a duplicate, else 0); a duplicate writes nothing, and its ``memory_id`` is the stored
row's.

Offline and deterministic: with no embedding model (``memory.embedder`` is ``"none"``) only exact
duplicates, slot values and opposites are found; near-duplicates and related facts need vectors. An
LLM classifier may decide instead (``memory.classifier: "llm"``, off by default;
node/absorb/llm_classify.py): asked before the write transaction, the rules behind it on any
failure.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

from feral.node.answers import AbsorbedAnswer, EdgeRow
from feral.storage.absorb.absorb_store import Candidates, Decision, Outcome
from feral.storage.db.connection import Connection
from feral.storage.db.rows import FactRow
from feral.storage.memory.curation import set_scope
from feral.storage.memory.memories import Row, Stamp
from feral.storage.memory.memory_model import DEFAULT_SCOPE, read_meta
from feral.sync.types import NodeId

from .absorb_fact import Fact, Said, embed_facts, held_vectors
from .classify import Thresholds, decide, fact_text, keep_both
from .llm_classify import llm_classifier_for, same_candidates
from .phrases import Triple
from .same_fact import hard_tokens

if TYPE_CHECKING:
    from feral.node.kernel import Kernel

__all__ = ["Absorbed", "Said", "absorb", "absorbing", "within_scope"]

log = logging.getLogger("feral.classify")


@dataclass(frozen=True)
class Absorbed:
    """What absorbing one fact did."""

    memory_id: str
    classification: str
    row: FactRow
    edges: list[EdgeRow] = field(default_factory=list)
    duplicates_merged: int = 0
    clauses: list[Absorbed] = field(default_factory=list)
    """The other clauses of a compound text, each absorbed alone, in the order said."""

    @property
    def archived(self) -> list[str]:
        """The rows this fact superseded: archived now (``memory restore ID`` undoes it)."""
        return [str(e["to_id"]) for e in self.edges if e["type"] == "supersedes"]

    def as_dict(self) -> AbsorbedAnswer:
        """The answer, beside the stored row's own fields (``id``, ``subject``, ...), so a
        script that read the row ``remember --json`` printed before still finds them.

        ``written`` says whether a row was written (a duplicate writes none: ``merged_into``
        names the stored row it was merged into) and ``archived_rows`` names every row it
        superseded, so nothing is dropped or archived without the answer saying which;
        ``clauses`` holds each clause's own answer when the text said more than one fact."""
        merged = self.memory_id if self.classification == "duplicate" else None
        answer: dict[str, Any] = {
            **self.row,
            "status": "absorbed",
            "memory_id": self.memory_id,
            "classification": self.classification,
            "written": merged is None,
            "merged_into": merged,
            "archived_rows": self.archived,
            "edges_created": len(self.edges),
            "duplicates_merged": self.duplicates_merged,
            "edges": self.edges,
        }
        if self.clauses:
            answer["clauses"] = [replace(self, clauses=[]).as_dict()] + [
                clause.as_dict() for clause in self.clauses
            ]
        return cast(AbsorbedAnswer, answer)  # classification: one of the five


async def absorb(
    node: Kernel,
    said: Said,
    *,
    limits: Thresholds | None = None,
    scope: str | None = None,
    keep: bool = False,
) -> Absorbed:
    """Run the pipeline on what was said (checked and parsed: :class:`Said`) and answer what
    happened (module docstring).

    A text saying several facts is absorbed clause by clause, each alone (the answer is the first
    clause's, the others in its ``clauses``). ``scope`` (checked by the caller:
    node/settings/scopes.py) puts a written fact in that scope, in the same transaction; a duplicate
    keeps the scope it has, but for a fact of a session or agent the user now states
    (``scope="user"``), lifted to the user's. A fact in a session's or agent's scope never archives
    a row of another scope (node/settings/scopes.py). ``keep`` (``--keep-both``) writes what would
    be merged or superseded beside it, linked ``related_to``."""
    answers = [await _absorb_one(node, parsed, limits, scope, keep) for parsed in said.triples]
    return replace(answers[0], clauses=answers[1:])


def absorbing(
    text: str | None, triple: Triple | None, scope: str | None = None, *, keep_both: bool = False
) -> Callable[[Kernel], Awaitable[Absorbed]]:
    """``Node.absorb`` for a command whose node is not open yet: what was said is checked now
    (:meth:`Said.of`: validated, scanned, parsed), so a refused fact is refused before the home
    is opened (a home whose database is not made yet stays without one); the answer runs
    ``Node.absorb`` on the node once it is open.

    Raises:
        InvalidInput: neither or both given, or an empty part.
        SecretRefused: it holds what looks like a secret.
    """
    said = Said.of(text, triple)
    return lambda node: absorb(node, said, scope=scope, keep=keep_both)


async def _absorb_one(
    node: Kernel, parsed: Triple, limits: Thresholds | None, scope: str | None, keep: bool
) -> Absorbed:
    """Embed, then read, decide and write in one transaction (:func:`_absorb_in_scope`)."""
    vectors = await embed_facts(node, [fact_text(*parsed)])
    fact = Fact(parsed, vectors[0], await held_vectors(node, vectors))
    decide_now = await _decider(node, fact, limits)
    outcome: Outcome = await node.write(
        _absorb_in_scope, fact, decide_now, scope, keep, now_ms=node.now_ms()
    )
    if outcome.decision.duplicate_of is None or scope is not None:
        await node.after_write()
    return _absorbed(outcome)


def _absorbed(outcome: Outcome) -> Absorbed:
    merged = 1 if outcome.decision.classification == "duplicate" else 0
    return Absorbed(
        str(outcome.row["id"]),
        outcome.decision.classification,
        outcome.row,
        cast(list[EdgeRow], outcome.edges),
        merged,
    )


async def _decider(
    node: Kernel, fact: Fact, limits: Thresholds | None
) -> Callable[[Candidates], Decision]:
    """How the write decides: the rules, or (``memory.classifier: "llm"``) the model's answer
    to a question asked now, outside any transaction, if the write finds what it was asked
    about (node/absorb/llm_classify.py); the rules whenever it gives none."""
    classifier = llm_classifier_for(node.settings.memory)
    if classifier is None:
        return lambda found: decide(found, limits)
    asked = await node.store.read(fact.candidates_of)
    verdict = await asyncio.to_thread(classifier.classify, asked)

    def decide_now(found: Candidates) -> Decision:
        if verdict is not None and same_candidates(asked, found):
            return _vetted(verdict, found)
        if verdict is not None:
            log.warning("! the stored facts changed while the LLM classifier answered: rules")
        return decide(found, limits)

    return decide_now


def _vetted(verdict: Decision, found: Candidates) -> Decision:
    """An LLM's "duplicate" that changes a number, a unit, a negation or a name is two facts:
    written, and related to the one it was said to repeat (node/absorb/same_fact.py)."""
    merged = verdict.duplicate_of
    if verdict.classification != "duplicate" or merged is None:
        return verdict
    rows = [found.exact, *found.slot, *(row for row, _ in found.neighbours)]
    row = next((r for r in rows if r is not None and str(r["id"]) == merged), None)
    text = fact_text(*found.triple)
    if row is None or hard_tokens(text) == hard_tokens(_row_text(row)):
        return verdict
    return Decision("related", related=(merged,))


def _row_text(row: Row) -> str:
    return fact_text(str(row["subject"]), str(row["predicate"]), str(row["object"]))


def _absorb_in_scope(
    conn: Connection,
    origin: NodeId,
    stamp: Stamp,
    fact: Fact,
    decide_now: Callable[[Candidates], Decision],
    scope: str | None,
    keep: bool,
    *,
    now_ms: int,
) -> Outcome:
    """Read, decide and write in this one transaction, in that order: the candidates read,
    the decision held to ``scope`` and ``keep``, the outcome written, then a written fact put in
    ``scope`` (a duplicate only lifted to the user's, never moved down: node/settings/scopes.py)."""
    found = fact.candidates_of(conn)
    decision = within_scope(conn, decide_now(found), scope)
    if keep:
        decision = keep_both(decision, found.triple)
    outcome = fact.write(conn, origin, stamp, found, decision, now_ms=now_ms)
    row_id = str(outcome.row["id"])
    if scope is not None and (outcome.decision.duplicate_of is None or scope == DEFAULT_SCOPE):
        set_scope(conn, origin, stamp, row_id, scope)
    return outcome


def within_scope(conn: Connection, decision: Decision, scope: str | None) -> Decision:
    """``decision`` with what a write in ``scope`` may not archive turned into links: a
    session's or agent's fact supersedes only rows of its own scope, and is ``related`` to
    the others (the user's rows are archived only by the user's own facts)."""
    if scope in (None, DEFAULT_SCOPE) or not decision.supersedes:
        return decision
    own = tuple(i for i in decision.supersedes if read_meta(conn, i).scope == scope)
    kept = tuple(i for i in decision.supersedes if i not in own)
    if not kept:
        return decision
    if not own:
        return Decision("related", related=kept)
    return Decision("supersede", supersedes=own, related=kept)
