"""The storage side of absorbing a fact: what is stored near it, and one write for the outcome.

The caller runs both in one write transaction, in a straight line: :func:`read_candidates` reads
what a new fact is compared with (the fact itself, the live facts of the same subject and
predicates, the opposite fact, and the nearest facts by vector, or by full text for rows still in
the embedding queue); the caller decides (node/absorb/classify.py, pure); :func:`write_outcome`
writes that decision through :func:`~feral.storage.memory.memories.commit_local`: the new fact, its
meta row, the facts it supersedes archived, and the edges. Nothing here calls back into the caller,
and nothing is overwritten; every write replicates. Reading and writing in one transaction means two
processes absorbing into one home never both supersede from a stale view.

Vectors are compared here only as given: the caller embeds the new text before the
transaction opens (a model never runs inside one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, cast

from feral.storage.db.connection import Connection
from feral.storage.db.rows import FactRow
from feral.storage.memory.memories import (
    Row,
    Stamp,
    find_row,
    remember_fact,
    row_dict,
    select_sql,
    set_archived,
)
from feral.storage.memory.memory_model import Meta, add_edge, write_meta
from feral.storage.vectors.vectors import (
    Embedder,
    Queued,
    VectorSink,
    embedder_in_use,
    queue_waiting,
    queued_rowids,
    search_similar,
    store_vectors,
)
from feral.sync.ids import fact_id
from feral.sync.schema import FACTS, Table
from feral.sync.types import NodeId

from .word_neighbours import live_facts_by_rowid, neighbour_rows

__all__ = [
    "NEIGHBOURS",
    "Candidates",
    "HeldVectors",
    "Decision",
    "NewVector",
    "Outcome",
    "facts_in_slots",
    "read_candidates",
    "slot_rows",
    "write_outcome",
]

NEIGHBOURS = 8
"""How many nearest stored facts (by vector, and by full text among queued rows) are compared."""

Triple = tuple[str, str, str]


class HeldVectors(Protocol):
    """Vectors held in memory (storage/vectors/vector_index.py's ``VectorIndex``): the nearest rows
    from the matrix it holds instead of a fresh read of every vector, the same rows either
    way."""

    def nearest(
        self, conn: Connection, table: Table, query_vector: bytes, k: int
    ) -> list[tuple[int, float]]: ...


@dataclass(frozen=True)
class Candidates:
    """What is stored near a new fact, read in the write transaction."""

    triple: Triple
    exact: Row | None
    """The stored row with the new fact's id, live or archived (``None``: never stored)."""
    slot: list[Row]
    """Live facts of the same subject under any of the slot's predicates, oldest first."""
    opposite: Row | None
    """The live fact saying the opposite (same subject and object), if any."""
    neighbours: list[tuple[Row, float | None]]
    """Nearest live facts with their cosine to the new text; ``None``: no vector yet."""


@dataclass(frozen=True)
class Decision:
    """What to do with a new fact: its classification and the ids it links to."""

    classification: str
    duplicate_of: str | None = None
    supersedes: tuple[str, ...] = ()
    contradicts: tuple[str, ...] = ()
    related: tuple[str, ...] = ()


@dataclass(frozen=True)
class NewVector:
    """The new fact's vector, made before the transaction: stored with the row, so the
    embedding queue does not embed the same text again."""

    embedder: Embedder
    text: str
    values: list[float]
    sink: VectorSink | None = None


@dataclass(frozen=True)
class Outcome:
    """What :func:`write_outcome` wrote: the row that holds the fact and the edges made."""

    row: FactRow
    decision: Decision
    edges: list[Row] = field(default_factory=list)


def slot_rows(conn: Connection, subject: str, predicates: Sequence[str]) -> list[Row]:
    """Live facts whose subject is ``subject`` (any case) and predicate one of ``predicates``."""
    marks = ", ".join("?" * len(predicates))
    records = conn.execute(
        f"{select_sql(FACTS)} WHERE subject = ? COLLATE NOCASE AND predicate IN ({marks}) "
        "AND deleted = 0 AND archived = 0 ORDER BY created_at, id",
        (subject.strip(), *predicates),
    ).fetchall()
    return [row_dict(FACTS, r) for r in records]


def _row(conn: Connection, row_id: str) -> Row | None:
    record = conn.execute(f"{select_sql(FACTS)} WHERE id = ?", (row_id,)).fetchone()
    return row_dict(FACTS, record) if record is not None else None


def _neighbours(
    conn: Connection,
    text: str,
    vector: bytes | None,
    own_id: str,
    held: HeldVectors | None,
    common: set[str] | None,
) -> list[tuple[Row, float | None]]:
    """The nearest live facts by vector (from ``held`` when the process holds them), then the
    facts sharing most of the text's words that are still waiting for one (all of them when
    the new fact has no vector: a bulk write), read at a bounded cost
    (storage/absorb/word_neighbours.py)."""
    found: dict[str, tuple[Row, float | None]] = {}
    if vector is not None and embedder_in_use(conn) is not None:
        if held is not None:
            nearest = held.nearest(conn, FACTS, vector, NEIGHBOURS + 1)
        else:
            nearest = search_similar(conn, FACTS, vector, NEIGHBOURS + 1)
        rows = live_facts_by_rowid(conn, [rowid for rowid, _ in nearest])
        for rowid, cosine in nearest:
            if rowid in rows and rows[rowid]["id"] != own_id:
                found[rows[rowid]["id"]] = (rows[rowid], cosine)
    if vector is not None and not queue_waiting(conn):
        return list(found.values())  # the usual case: every stored fact has its vector
    hits = neighbour_rows(conn, text, own_id, NEIGHBOURS, common)
    rowids = [rowid for rowid, _ in hits]
    waiting = queued_rowids(conn, FACTS.name, rowids) if vector is not None else set(rowids)
    for rowid, row in hits:
        if rowid in waiting and row["id"] not in found:
            found[row["id"]] = (row, None)
    return list(found.values())


def read_candidates(
    conn: Connection,
    triple: Triple,
    slot_predicates: Sequence[str],
    opposite: str,
    text: str,
    vector: bytes | None,
    held: HeldVectors | None = None,
    common: set[str] | None = None,
) -> Candidates:
    """Everything the caller's decision compares a new fact with (``held``: the
    vectors this process holds in memory, if it does; ``common``: the words a bulk write has
    found common so far, storage/absorb/word_neighbours.py)."""
    subject, predicate, obj = (part.strip() for part in triple)
    own = fact_id(subject, predicate, obj)
    slot = [r for r in slot_rows(conn, subject, slot_predicates) if r["id"] != own]
    against = _row(conn, fact_id(subject, opposite, obj))
    if against is not None and (against["archived"] or against["deleted"]):
        against = None
    return Candidates(
        (subject, predicate, obj),
        _row(conn, own),
        slot,
        against,
        _neighbours(conn, text, vector, own, held, common),
    )


def write_outcome(
    conn: Connection,
    origin: NodeId,
    stamp: Stamp,
    triple: Triple,
    decision: Decision,
    *,
    category: str | None,
    now_ms: int,
    vector: NewVector | None = None,
    source_episode: str | None = None,
) -> Outcome:
    """Write what was decided for ``triple`` (read by :func:`read_candidates` in this same
    transaction): nothing for a duplicate, whose answer is the stored row.

    Otherwise the fact is remembered (an archived copy comes back), its meta row written with
    ``category`` (``None`` writes none: the row keeps storage/memory/memory_model.py's defaults),
    its ``vector`` stored, each superseded fact archived, and one edge written per link, from the
    new row. ``source_episode`` names the episode a fact was extracted from (a new row only).
    """
    if decision.duplicate_of is not None:
        return Outcome(cast(FactRow, find_row(conn, decision.duplicate_of)[1]), decision)
    row = remember_fact(conn, origin, stamp, triple, now_ms=now_ms, source_episode=source_episode)
    if category is not None:
        meta = Meta(str(row["id"]), category=category, updated_at=now_ms)
        write_meta(conn, origin, stamp, meta)
    if vector is not None:
        _store_vector(conn, str(row["id"]), vector)
    edges: list[Row] = []
    links = (
        ("supersedes", decision.supersedes),
        ("contradicts", decision.contradicts),
        ("related_to", decision.related),
    )
    for edge_type, targets in links:
        for target in targets:
            if edge_type == "supersedes":
                set_archived(conn, origin, stamp, target, True)
            edges.append(add_edge(conn, origin, stamp, edge_type, row["id"], target, now_ms=now_ms))
    return Outcome(row, decision, edges)


def _store_vector(conn: Connection, row_id: str, vector: NewVector) -> None:
    """Store the vector made for the new row, if the row is queued with that very text (a
    text that differs stays queued and is embedded as usual)."""
    (rowid,) = conn.execute("SELECT rowid FROM facts WHERE id = ?", (row_id,)).fetchone()
    queued = [Queued(FACTS.name, int(rowid), vector.text)]
    store_vectors(conn, vector.embedder, queued, [vector.values], vector.sink)


def facts_in_slots(conn: Connection, predicates: Sequence[str], prefix: str) -> list[Row]:
    """Live facts whose predicate is one of ``predicates`` or starts with ``prefix``, by id."""
    marks = ", ".join("?" * len(predicates))
    pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    records = conn.execute(
        f"{select_sql(FACTS)} WHERE deleted = 0 AND archived = 0 "
        f"AND (predicate IN ({marks}) OR predicate LIKE ? ESCAPE '\\') ORDER BY id",
        (*predicates, pattern),
    ).fetchall()
    return [row_dict(FACTS, r) for r in records]
