"""Counts and facts about one database, for ``feral memory stats`` and ``sync status``."""

from __future__ import annotations

from typing import TypedDict

from feral.storage.db.connection import Connection, sqlite_version
from feral.storage.log.delta_log import clock_high_water
from feral.storage.vectors.vectors import VECTOR_TABLES, embedder_in_use

from .memories import TIER_OF, TIERS

__all__ = ["DatabaseStats", "EmbedderInUse", "TierCounts", "database_stats", "log_epoch"]


class TierCounts(TypedDict):
    live: int
    archived: int
    deleted: int


class EmbedderInUse(TypedDict):
    name: str
    dim: int


class DatabaseStats(TypedDict):
    """What one database holds, as :func:`database_stats` counts it: the node adds its own
    figures to it (node/answers.py ``StatsAnswer``), so the two share their keys by type."""

    tiers: dict[str, TierCounts]
    """Per tier (``episodic``, ``semantic``, ``execution``)."""
    delta_log_entries: int
    origins: int
    vectors: int
    embedder: EmbedderInUse | None
    embed_pending: int
    hlc: int
    epoch: str
    sqlite_version: str


def log_epoch(conn: Connection) -> str:
    """The random id of this database's log, new whenever the database is new."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()
    return str(row[0]) if row else ""


def _vector_count(conn: Connection) -> int:
    total = 0
    for table in VECTOR_TABLES:
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = ?", (f"{table.name}_vectors",)
        ).fetchone()
        if exists:
            total += conn.execute(f"SELECT count(*) FROM {table.name}_vectors").fetchone()[0]
    return int(total)


def database_stats(conn: Connection) -> DatabaseStats:
    """Row counts per tier (live, archived, deleted), the log, vectors and the clock."""
    tiers: dict[str, TierCounts] = {}
    for table in TIERS:
        archived = "archived" if table.has_archive else "0"
        live, arch, deleted = conn.execute(
            f"SELECT coalesce(sum(deleted = 0 AND {archived} = 0), 0), "
            f"coalesce(sum(deleted = 0 AND {archived} = 1), 0), coalesce(sum(deleted), 0) "
            f"FROM {table.name}"
        ).fetchone()
        tiers[TIER_OF[table.name]] = {"live": live, "archived": arch, "deleted": deleted}
    embedder = embedder_in_use(conn)
    pending = conn.execute("SELECT count(*) FROM embed_queue").fetchone()[0]
    return {
        "tiers": tiers,
        "delta_log_entries": conn.execute("SELECT count(*) FROM delta_log").fetchone()[0],
        "origins": conn.execute("SELECT count(*) FROM version_vector").fetchone()[0],
        "vectors": _vector_count(conn),
        "embedder": None if embedder is None else {"name": embedder[0], "dim": embedder[1]},
        "embed_pending": pending,
        "hlc": clock_high_water(conn),
        "epoch": log_epoch(conn),
        "sqlite_version": sqlite_version(),
    }
