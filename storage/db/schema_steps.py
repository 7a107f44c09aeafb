"""The schema's steps: this release's migrations, in order, as frozen DDL text.

Apart from the runner (:mod:`feral.storage.db.migrations`) because the two change for opposite
reasons: a step, once shipped, is never edited again (it must mean the same thing forever, so
its DDL is written out, never generated from the current registry), while the runner may. A new
step is appended here; a test holds the resulting tables to :mod:`feral.sync.schema`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MIGRATIONS", "Migration"]


@dataclass(frozen=True)
class Migration:
    """One named schema step; ``sql`` runs statement by statement inside the step's transaction."""

    name: str
    sql: str


def _fts(table: str, columns: tuple[str, ...], tokenize: str = "") -> str:
    """An FTS5 external-content index over ``table`` kept in step by _ai/_ad/_au triggers
    (``tokenize``: an FTS5 tokenizer option, such as ``porter unicode61``; none: the default)."""
    cols = ", ".join(columns)
    new = ", ".join(f"new.{c}" for c in columns)
    old = ", ".join(f"old.{c}" for c in columns)
    options = f"content='{table}', content_rowid='rowid'"
    if tokenize:
        options += f", tokenize='{tokenize}'"
    return f"""
CREATE VIRTUAL TABLE {table}_fts USING fts5({cols}, {options});
CREATE TRIGGER {table}_ai AFTER INSERT ON {table} BEGIN
  INSERT INTO {table}_fts(rowid, {cols}) VALUES (new.rowid, {new});
END;
CREATE TRIGGER {table}_ad AFTER DELETE ON {table} BEGIN
  INSERT INTO {table}_fts({table}_fts, rowid, {cols}) VALUES ('delete', old.rowid, {old});
END;
CREATE TRIGGER {table}_au AFTER UPDATE ON {table} BEGIN
  INSERT INTO {table}_fts({table}_fts, rowid, {cols}) VALUES ('delete', old.rowid, {old});
  INSERT INTO {table}_fts(rowid, {cols}) VALUES (new.rowid, {new});
END;"""


def _vectors_from_vec0(table: str) -> str:
    """``table``'s plain vector table, filled from the vec0 tables an earlier release kept.

    Only vectors of the recorded dimension are copied; a live row left without one (a layout
    this copy does not read) is queued to be embedded again, never silently unsearchable.
    """
    width = "length(v.vectors) / c.size"
    return f"""
CREATE TABLE IF NOT EXISTS {table}_vec_chunks(chunk_id INTEGER PRIMARY KEY, size, validity, rowids);
CREATE TABLE IF NOT EXISTS {table}_vec_rowids(rowid INTEGER PRIMARY KEY, id, chunk_id,
  chunk_offset);
CREATE TABLE IF NOT EXISTS {table}_vec_vector_chunks00(rowid PRIMARY KEY, vectors);
CREATE TABLE {table}_vectors (rowid INTEGER PRIMARY KEY, embedding BLOB NOT NULL) STRICT;
INSERT INTO {table}_vectors(rowid, embedding)
SELECT r.rowid, substr(v.vectors, r.chunk_offset * {width} + 1, {width})
FROM {table}_vec_rowids r JOIN {table}_vec_chunks c ON c.chunk_id = r.chunk_id
JOIN {table}_vec_vector_chunks00 v ON v.rowid = r.chunk_id
WHERE {width} = 4 * (SELECT value FROM meta WHERE key = 'embed_dim');
INSERT OR IGNORE INTO embed_queue(tbl, row_rowid)
SELECT '{table}', rowid FROM {table} WHERE deleted = 0
  AND EXISTS (SELECT 1 FROM meta WHERE key = 'embedder')
  AND rowid NOT IN (SELECT rowid FROM {table}_vectors);
"""


_CLOCK = "hlc INTEGER NOT NULL, origin TEXT NOT NULL, deleted INTEGER NOT NULL DEFAULT 0"

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "0001_meta_and_log",
        """
CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value ANY) STRICT;
CREATE TABLE delta_log (
  origin TEXT NOT NULL,
  hlc INTEGER NOT NULL,
  tbl INTEGER NOT NULL,
  row_id TEXT NOT NULL,
  payload BLOB,
  PRIMARY KEY (origin, hlc)
) STRICT, WITHOUT ROWID;
CREATE TABLE version_vector (origin TEXT PRIMARY KEY NOT NULL, hlc INTEGER NOT NULL) STRICT;
""",
    ),
    Migration(
        "0002_tiers",
        f"""
CREATE TABLE episodes (
  id TEXT PRIMARY KEY NOT NULL, session_id TEXT NOT NULL, summary TEXT NOT NULL,
  entities TEXT NOT NULL, created_at INTEGER NOT NULL, archived INTEGER NOT NULL, {_CLOCK}
) STRICT;
CREATE TABLE facts (
  id TEXT PRIMARY KEY NOT NULL, subject TEXT NOT NULL, predicate TEXT NOT NULL,
  object TEXT NOT NULL, confidence REAL NOT NULL, source_episode TEXT,
  created_at INTEGER NOT NULL, archived INTEGER NOT NULL, {_CLOCK}
) STRICT;
CREATE TABLE exec_log (
  id TEXT PRIMARY KEY NOT NULL, session_id TEXT NOT NULL, tool TEXT NOT NULL,
  args TEXT NOT NULL, result TEXT NOT NULL, latency_ms INTEGER NOT NULL,
  success INTEGER NOT NULL, created_at INTEGER NOT NULL, {_CLOCK}
) STRICT;
CREATE INDEX episodes_created ON episodes(created_at);
{_fts("episodes", ("summary", "entities"))}
{_fts("facts", ("subject", "predicate", "object"))}
""",
    ),
    Migration(
        "0003_vectors",
        """
CREATE TABLE embed_queue (
  tbl TEXT NOT NULL, row_rowid INTEGER NOT NULL, PRIMARY KEY (tbl, row_rowid)
) STRICT, WITHOUT ROWID;
""",
    ),
    Migration(
        "0004_peer_status",
        """
CREATE TABLE peer_status (
  node_id TEXT PRIMARY KEY NOT NULL,
  name TEXT NOT NULL DEFAULT '',
  url TEXT,
  reachable INTEGER NOT NULL DEFAULT 0,
  last_attempt_at INTEGER,
  last_sync_at INTEGER,
  last_error TEXT,
  last_error_at INTEGER,
  errors INTEGER NOT NULL DEFAULT 0,
  clock_offset_ms INTEGER,
  vector TEXT NOT NULL DEFAULT '{}',
  encrypted INTEGER NOT NULL DEFAULT 0,
  rows_received INTEGER NOT NULL DEFAULT 0,
  rows_sent INTEGER NOT NULL DEFAULT 0
) STRICT;
""",
    ),
    Migration(
        "0005_log_entry_counts",
        """
ALTER TABLE version_vector ADD COLUMN entries INTEGER NOT NULL DEFAULT 0;
UPDATE version_vector SET entries = (
  SELECT count(*) FROM delta_log WHERE delta_log.origin = version_vector.origin);
""",
    ),
    Migration(
        "0006_integrity_alarms",
        """
CREATE TABLE integrity_alarms (
  origin TEXT NOT NULL,
  hlc INTEGER NOT NULL,
  peer TEXT NOT NULL,
  tbl INTEGER NOT NULL,
  row_id TEXT NOT NULL,
  first_at INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (origin, hlc, peer)
) STRICT;
""",
    ),
    Migration(
        # A hard delete erases (storage/log/erase.py): the full-text indexes remove a deleted row's
        # terms from their pages at once instead of leaving them under a delete marker until a
        # merge, and the tombstones of each table are found without a scan.
        "0007_erase_on_nuke",
        """
INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO facts_fts(facts_fts, rank) VALUES ('secure-delete', 1);
CREATE INDEX episodes_tombstones ON episodes(id) WHERE deleted = 1;
CREATE INDEX facts_tombstones ON facts(id) WHERE deleted = 1;
CREATE INDEX exec_log_tombstones ON exec_log(id) WHERE deleted = 1;
""",
    ),
    Migration(
        # A truthful status (issue 11): what each peer last said it holds (its counts and its row
        # digest, storage/log/row_digest.py, and the vector they were taken at), the progress of the
        # stream it last announced, when its last link ended, and the links up now, one row per link
        # and process, so a CLI beside ``feral serve`` sees the server's links.
        "0008_truthful_status",
        """
ALTER TABLE peer_status ADD COLUMN entries TEXT NOT NULL DEFAULT '{}';
ALTER TABLE peer_status ADD COLUMN digest TEXT;
ALTER TABLE peer_status ADD COLUMN digest_vector TEXT;
ALTER TABLE peer_status ADD COLUMN incoming_total INTEGER NOT NULL DEFAULT 0;
ALTER TABLE peer_status ADD COLUMN incoming_done INTEGER NOT NULL DEFAULT 0;
ALTER TABLE peer_status ADD COLUMN link_down_at INTEGER;
CREATE TABLE peer_links (
  link_id TEXT PRIMARY KEY NOT NULL,
  peer TEXT NOT NULL,
  pid INTEGER NOT NULL,
  up_at INTEGER NOT NULL,
  seen_at INTEGER NOT NULL
) STRICT;
""",
    ),
    Migration(
        # Memory that compounds (issue 14): per-memory category, scope and importance, typed
        # edges between memories, and the entities of the graph; replicated like the tiers.
        "0009_memory_model",
        f"""
CREATE TABLE memory_meta (
  id TEXT PRIMARY KEY NOT NULL, category TEXT NOT NULL, scope TEXT NOT NULL,
  importance REAL NOT NULL, importance_note TEXT NOT NULL, updated_at INTEGER NOT NULL, {_CLOCK}
) STRICT;
CREATE INDEX memory_meta_scope ON memory_meta(scope);
CREATE INDEX memory_meta_tombstones ON memory_meta(id) WHERE deleted = 1;
CREATE TABLE edges (
  id TEXT PRIMARY KEY NOT NULL, from_id TEXT NOT NULL, to_id TEXT NOT NULL, type TEXT NOT NULL,
  note TEXT NOT NULL, created_at INTEGER NOT NULL, archived INTEGER NOT NULL, {_CLOCK}
) STRICT;
CREATE INDEX edges_from ON edges(from_id, type);
CREATE INDEX edges_to ON edges(to_id, type);
CREATE INDEX edges_tombstones ON edges(id) WHERE deleted = 1;
CREATE TABLE entities (
  id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, type TEXT NOT NULL,
  created_at INTEGER NOT NULL, archived INTEGER NOT NULL, {_CLOCK}
) STRICT;
CREATE INDEX entities_name ON entities(name COLLATE NOCASE);
CREATE INDEX entities_tombstones ON entities(id) WHERE deleted = 1;
""",
    ),
    Migration(
        # A nuke erases on every order of arrival (storage/log/erase.py): the log's entries without
        # payload (tombstones, and the entries they erased) found by row, even once the row was
        # written again; the entries older than one lose their words (and their alarms) here.
        "0010_log_tombstones",
        """
CREATE INDEX delta_log_tombstones ON delta_log(tbl, row_id, hlc) WHERE payload IS NULL;
UPDATE delta_log SET payload = NULL WHERE payload IS NOT NULL AND EXISTS (
  SELECT 1 FROM delta_log AS t WHERE t.tbl = delta_log.tbl AND t.row_id = delta_log.row_id
    AND t.payload IS NULL AND (t.hlc, t.origin) > (delta_log.hlc, delta_log.origin));
DELETE FROM integrity_alarms WHERE EXISTS (
  SELECT 1 FROM delta_log AS t WHERE t.tbl = integrity_alarms.tbl
    AND t.row_id = integrity_alarms.row_id AND t.payload IS NULL
    AND (t.hlc, t.origin) > (integrity_alarms.hlc, integrity_alarms.origin));
""",
    ),
    Migration(
        # Private links (issue 13): the SHA-256 fingerprint of the TLS certificate a peer's
        # link last ran under (the server's: the peer's when we dialled, ours when it did).
        "0011_link_certificates",
        """
ALTER TABLE peer_status ADD COLUMN certificate TEXT;
""",
    ),
    Migration(
        "0012_invitations",
        """
CREATE TABLE invitations (
  invitation_key BLOB PRIMARY KEY NOT NULL, label TEXT NOT NULL, url TEXT NOT NULL,
  created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, used_at INTEGER, used_by TEXT
) STRICT;
""",
    ),
    Migration(
        # Concurrent edits surfaced (issue 16): each log entry keeps the version its write
        # replaced (entries from before are "unknown", hlc 0, and never conflict), the log is
        # found by row, and the replicated conflict records (sync/conflicts.py) with the
        # local queue of rows a received page may have forked.
        "0013_conflicts",
        f"""
ALTER TABLE delta_log ADD COLUMN prior_hlc INTEGER DEFAULT 0;
ALTER TABLE delta_log ADD COLUMN prior_origin TEXT DEFAULT '';
CREATE INDEX delta_log_rows ON delta_log(tbl, row_id);
CREATE TABLE conflicts (
  id TEXT PRIMARY KEY NOT NULL, tbl TEXT NOT NULL, row_id TEXT NOT NULL, prior TEXT NOT NULL,
  version_a TEXT NOT NULL, values_a TEXT NOT NULL, version_b TEXT NOT NULL,
  values_b TEXT NOT NULL, detected_at INTEGER NOT NULL, resolved INTEGER NOT NULL,
  kept TEXT NOT NULL, resolved_at INTEGER NOT NULL, {_CLOCK}
) STRICT;
CREATE INDEX conflicts_row ON conflicts(tbl, row_id);
CREATE INDEX conflicts_tombstones ON conflicts(id) WHERE deleted = 1;
CREATE TABLE conflict_queue (
  tbl INTEGER NOT NULL, row_id TEXT NOT NULL, PRIMARY KEY (tbl, row_id)
) STRICT, WITHOUT ROWID;
""",
    ),
    Migration(
        # Logs and tombstones collected (issue 16): per origin, the newest stamp this log no
        # longer holds every entry up to (pruned, or taken from a snapshot); a peer below it
        # is sent a snapshot (storage/log/snapshot.py). Tombstones leave the row digest, so it is
        # computed again at the next write.
        "0014_prune",
        """
CREATE TABLE log_floor (origin TEXT PRIMARY KEY NOT NULL, hlc INTEGER NOT NULL) STRICT;
DELETE FROM meta WHERE key = 'row_digest';
""",
    ),
    Migration(
        # Mixed versions sync (issue 16): the values of columns a newer schema added and this
        # one does not know, kept with their row as a JSON array (sync/unknown.py), merged and
        # relayed with it; the index finds the few rows that hold any.
        "0015_opaque_columns",
        "".join(
            f"ALTER TABLE {t} ADD COLUMN opaque TEXT;\n"
            f"CREATE INDEX {t}_opaque ON {t}(id) WHERE opaque IS NOT NULL;\n"
            for t in (
                "episodes",
                "facts",
                "exec_log",
                "memory_meta",
                "edges",
                "entities",
                "conflicts",
            )
        ),
    ),
    Migration(
        # Access strength (storage/memory/access_strength.py): how this device has retrieved each
        # memory. Local, like the vectors: never logged, exported or sent. A hard delete (here
        # or from a peer) takes the memory's row with it.
        "0016_access_strength",
        """
CREATE TABLE access_strength (
  memory_id TEXT PRIMARY KEY NOT NULL, strength REAL NOT NULL,
  last_access_ms INTEGER NOT NULL, accesses INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE TRIGGER facts_access_erased AFTER UPDATE OF deleted ON facts WHEN new.deleted = 1
BEGIN DELETE FROM access_strength WHERE memory_id = new.id; END;
CREATE TRIGGER episodes_access_erased AFTER UPDATE OF deleted ON episodes WHEN new.deleted = 1
BEGIN DELETE FROM access_strength WHERE memory_id = new.id; END;
""",
    ),
    Migration(
        # An alarm on a copy that differs from the held entry only by a nuke's erasure
        # (storage/log/integrity.py): it goes once the row here moves past that write. Alarms from
        # before are kept as they were (0: not known to be such a copy).
        "0017_erased_copy_alarms",
        """
ALTER TABLE integrity_alarms ADD COLUMN erased INTEGER NOT NULL DEFAULT 0;
""",
    ),
    Migration(
        # Search by stems (issue 25): the episodes' full-text index tokenized with the porter
        # stemmer, so "researching" finds "research"; rebuilt from the rows, erasing as 0007
        # set it. Facts keep exact words: absorb's near-duplicate finder counts word forms.
        "0018_episode_stems",
        f"""
DROP TRIGGER episodes_ai;
DROP TRIGGER episodes_ad;
DROP TRIGGER episodes_au;
DROP TABLE episodes_fts;
{_fts("episodes", ("summary", "entities"), "porter unicode61")}
INSERT INTO episodes_fts(episodes_fts) VALUES ('rebuild');
INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('secure-delete', 1);
""",
    ),
    Migration(
        # Vectors as plain float32 BLOBs searched with numpy (storage/vectors/vector_index.py), no
        # sqlite-vec. A database that held vec0 tables keeps its vectors: they are copied out of
        # the tables where vec0 kept them (a chunk's vectors side by side in one BLOB, each row's
        # chunk and slot in _rowids), which need no extension to read; the stand-ins make the
        # copy a no-op where they never existed. The vec0 tables' own schema rows are removed
        # by hand, since dropping them would need the extension.
        "0019_vectors_as_blobs",
        "".join(_vectors_from_vec0(table) for table in ("facts", "episodes"))
        + """
PRAGMA writable_schema = ON;
DELETE FROM sqlite_master WHERE type = 'table' AND name IN ('facts_vec', 'episodes_vec')
  AND sql LIKE 'CREATE VIRTUAL TABLE%';
PRAGMA writable_schema = OFF;
"""
        + "".join(
            f"DROP TABLE IF EXISTS {table}_vec_{part};\n"
            for table in ("facts", "episodes")
            for part in ("info", "chunks", "rowids", "vector_chunks00")
        ),
    ),
)
