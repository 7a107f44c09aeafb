"""The shapes of the rows storage hands to node/: one ``TypedDict`` per replicated tier.

A row is what :func:`feral.storage.memory.memories.row_dict` builds: the table's columns
(sync/schema.py), its clock fields and its tier. At runtime it stays a plain ``dict``, so the JSON
the CLI and the HTTP API print is unchanged; the types only let mypy check the keys and value types
that node/ and cli/ read. tests/storage/test_rows.py holds each shape to the schema registry, so a
column added there without its key here fails a test rather than going unnoticed.
"""

from __future__ import annotations

from typing import TypedDict

__all__ = ["EpisodeRow", "ExecutionRow", "FactRow"]


class _Clocked(TypedDict):
    """The fields every replicated row carries besides its columns."""

    id: str
    hlc: int
    """The packed HLC of the write that set this version (DESIGN §4)."""
    origin: str
    """The node that made that write."""
    deleted: bool
    """A hard-delete tombstone (``nuke``): every other column is emptied."""
    tier: str
    """``"episodic"``, ``"semantic"`` or ``"execution"``."""
    created_at: int


class FactRow(_Clocked):
    """A knowledge-graph triple (semantic memory)."""

    subject: str
    predicate: str
    object: str
    confidence: float
    source_episode: str | None
    archived: bool


class EpisodeRow(_Clocked):
    """A summary of part of a session (episodic memory)."""

    session_id: str
    summary: str
    entities: str
    """A JSON list of names, as stored and replicated."""
    archived: bool


class ExecutionRow(_Clocked):
    """One tool call in the insert-only execution log."""

    session_id: str
    tool: str
    args: str
    """JSON text."""
    result: str
    """JSON text."""
    latency_ms: int
    success: bool
