"""The answers of ``Node`` and ``feral.Memory``, as types: one ``TypedDict`` per JSON shape.

At runtime an answer stays the plain ``dict`` it always was, so what the HTTP API, the MCP tools
and the CLI's ``--json`` print is unchanged byte for byte; the types let mypy check every key a
caller reads, and node/api/schema.py makes the OpenAPI document's answer schemas from them
(node/api/answer_schema.py reads each ``TypedDict``; the :class:`msgspec.Meta` bounds written
here become the schema's ``minimum``/``maximum``), so the document cannot drift from the code.

The rows of the three memory tiers are storage's (:mod:`feral.storage.db.rows`), and so are the
database's own counts in the stats (:mod:`feral.storage.memory.stats`); the other rows a
node answers (an edge, an entity, a memory's meta) are written out here beside the answers. The
graph's answers are in node/recall/answers_graph.py, sync status's in node/links/answers_sync.py.
"""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired, TypeAlias, TypedDict

from msgspec import Meta

from feral.node.settings.limits import Fraction, Strategy
from feral.storage.db.rows import EpisodeRow, ExecutionRow, FactRow
from feral.storage.memory.stats import DatabaseStats, EmbedderInUse, TierCounts

__all__ = [
    "AbsorbedAnswer",
    "AbsorbedFact",
    "BriefMemory",
    "DigestAnswer",
    "DigestLine",
    "DistillAnswer",
    "EdgeRow",
    "EmbedderInUse",
    "EntityRow",
    "EpisodeRow",
    "ExecutionRow",
    "FactRow",
    "Followed",
    "GcAnswer",
    "GcGroup",
    "ListedEpisode",
    "ListedFact",
    "ListedMemory",
    "ListedMeta",
    "MemoryRow",
    "MetaAnswer",
    "PeerHold",
    "PromptFileAnswer",
    "PruneDone",
    "PruneFigures",
    "ScopedStats",
    "SearchAnswer",
    "SearchHit",
    "SessionAppended",
    "SessionEnded",
    "SessionEpisode",
    "SessionLine",
    "SessionState",
    "SlotConflict",
    "StatsAnswer",
    "SupersededFact",
    "TierCounts",
    "WikiPage",
    "WikiTopic",
]

MemoryRow: TypeAlias = FactRow | EpisodeRow | ExecutionRow
"""A row of one of the memory tiers: what an id names (``get``, ``nuke``)."""


class EdgeRow(TypedDict):
    """A typed, directed link between two memories (sync/schema.py's ``edges``)."""

    id: str
    from_id: str
    to_id: str
    type: str
    """``supersedes``, ``contradicts``, ``related_to``, ``co_extracted``..."""
    note: str
    created_at: int
    archived: bool
    hlc: int
    origin: str
    deleted: bool


class EntityRow(TypedDict):
    """A named entity of the graph (sync/schema.py's ``entities``)."""

    id: str
    name: str
    type: str
    created_at: int
    archived: bool
    hlc: int
    origin: str
    deleted: bool


class SearchHit(TypedDict):
    """One search result (DESIGN §6): the row, how each leg scored it and why it ranks there."""

    id: str
    tier: Literal["episodic", "semantic"]
    content: str
    score: float
    fts_score: Fraction
    vector_score: Fraction
    row: FactRow | EpisodeRow
    mmr_score: NotRequired[float]
    relevance: NotRequired[float]
    temporal: NotRequired[Fraction]
    importance: NotRequired[float]
    access: NotRequired[Annotated[float, Meta(ge=1)]]
    scope: NotRequired[str]
    category: NotRequired[str]
    via: NotRequired[Literal["graph", "graph_link"]]
    """How a graph search reached it: the path named it, or it is one hop from an answer."""
    graph_path: NotRequired[list[str]]
    edge: NotRequired[str]
    """The type of the edge a ``graph_link`` hit was reached by."""


class SearchAnswer(TypedDict):
    """``POST /api/memory/search`` and ``feral memory search --json``."""

    results: list[SearchHit]
    total: int
    query_time_ms: float
    strategy: Strategy
    mmr: bool
    notes: list[str]


class AbsorbedFact(FactRow):
    """What absorbing one fact did, beside the stored row's own fields."""

    status: Literal["absorbed"]
    memory_id: str
    classification: Literal["new", "duplicate", "supersede", "contradict", "related"]
    written: bool
    """Whether a row was written (a duplicate writes none)."""
    merged_into: str | None
    """The stored row a duplicate was merged into."""
    archived_rows: list[str]
    """Every row this fact superseded: archived now."""
    edges_created: int
    duplicates_merged: int
    edges: list[EdgeRow]


class AbsorbedAnswer(AbsorbedFact):
    """``remember``'s answer: a compound text's ``clauses`` hold each clause's own answer."""

    clauses: NotRequired[list[AbsorbedFact]]


class StatsAnswer(DatabaseStats):
    """``GET /api/memory/stats``: rows per tier, the log, vectors and the embedder."""

    node_id: str
    conflicts: int
    conflicting_values: int
    vector_search: str
    """``on``, or ``off: `` and why."""


class PeerHold(TypedDict):
    """One paired peer, as pruning sees it (storage/log/prune.py)."""

    node_id: str
    name: str
    last_sync_at: int | None
    holds: bool
    lacking: int


class PromptFileAnswer(TypedDict):
    """One prompt file written (``feral memory prompt --json``): how many facts each section
    shows and leaves out."""

    path: str
    shown: dict[str, int]
    left_out: dict[str, int]


class PruneFigures(TypedDict):
    """What a prune would collect now, and which peer holds it back longest."""

    log_entries: int
    prunable_entries: int
    prunable_tombstones: int
    retention_days: float
    peers: list[PeerHold]
    oldest_unacknowledged_peer: PeerHold | None


class PruneDone(PruneFigures):
    """``feral sync prune --json``: the figures of what went (or would go, on a dry run)."""

    dry_run: bool


class ScopedStats(StatsAnswer):
    """``feral memory stats --json``: the node's stats, what a prune would collect, and the
    tiers counted within ``scope`` when one is given."""

    prune: PruneFigures
    scope: NotRequired[str]


class WikiTopic(TypedDict):
    """One compiled wiki page in the index."""

    topic: str
    path: str
    sources: list[str]
    needs_review: bool


class WikiPage(TypedDict):
    topic: str
    markdown: str


class SupersededFact(FactRow):
    """An older version of a fact, in ``follow``'s history."""

    superseded_by: str
    """The newer version whose ``supersedes`` edge led to it."""


class Followed(TypedDict):
    """A memory with what ``follow`` adds (node/curation/memory_graph.py)."""

    record: MemoryRow
    edges: NotRequired[list[EdgeRow]]
    history: NotRequired[list[SupersededFact]]
    """Every version it superseded, nearest first."""
    current_values: list[str]
    conflicting: bool


class SlotConflict(TypedDict):
    """A single-valued slot holding live values no write had seen together."""

    subject: str
    predicate: str
    ids: list[str]


class ListedMeta(TypedDict):
    category: str
    scope: str
    importance: float
    importance_note: str
    updated_at: int


class ListedFact(FactRow):
    """A fact as ``memory list`` shows it."""

    meta: ListedMeta
    status: Literal["active", "archived", "superseded"]
    content: str


class ListedEpisode(EpisodeRow):
    """An episode as ``memory list`` shows it."""

    meta: ListedMeta
    status: Literal["active", "archived", "superseded"]
    content: str


ListedMemory: TypeAlias = ListedFact | ListedEpisode


class MetaAnswer(ListedMeta):
    """A memory's meta row (``boost``)."""

    memory_id: str


class BriefMemory(TypedDict):
    id: str
    content: str


class GcGroup(TypedDict):
    """Facts of one scope, subject and predicate consolidated into one."""

    scope: str
    subject: str
    predicate: str
    consolidated_id: str | None
    """The consolidated fact (``None`` on a dry run)."""
    members: list[BriefMemory]


class GcAnswer(TypedDict):
    dry_run: bool
    archived: list[BriefMemory]
    groups: list[GcGroup]


class DistillAnswer(TypedDict):
    dry_run: bool
    scope: str
    promoted: list[BriefMemory]


class DigestLine(TypedDict):
    id: str
    tier: str
    text: str
    created_at: int


class DigestAnswer(TypedDict):
    """``feral memory digest --json``: the ``<memory-context>`` block and what went into it."""

    text: str
    tokens: int
    max_tokens: int
    reference: str | None
    reference_ms: int
    topic: str | None
    scope: str | None
    sections: dict[str, list[DigestLine]]
    left_out: int


class SessionLine(TypedDict):
    role: str
    content: str


class SessionEpisode(TypedDict):
    id: str
    summary: str


class SessionState(TypedDict):
    """A working-memory session as a model would see it."""

    session: str
    messages: list[SessionLine]
    tokens: int
    compacts_above: int
    summarised: int


class SessionAppended(SessionState):
    episodes: list[SessionEpisode]
    facts: int


class SessionEnded(TypedDict):
    session: str
    episodes: list[SessionEpisode]
    facts: int
