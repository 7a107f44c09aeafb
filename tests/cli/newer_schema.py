"""``feral`` as a newer release would be: one more schema version, or another protocol range.

Run as ``python newer_schema.py [--protocols LOW:HIGH] ARGS...``: what a future release might
add is a schema value, ``NEWER`` (this release's ``BASE_SCHEMA`` with a nullable text column
``color`` appended to ``facts``, one schema version above), and its migration; it runs the CLI
with ARGS, passing both (``cli.main(..., obj=StoreSchema(...))``), so every store it opens is
of the newer schema. The migration follows the rules of docs/PROTOCOL.md §10: it moves a
value that the database kept opaque, while it was one version behind, into the new column.

``paint HOME NODE_ID FACT_ID COLOR`` instead writes a fact's color as the newer release's own
code would (one local write through ``commit_local`` on a store opened with ``NEWER``): no
command of this release names it.

``--protocols`` makes the process speak another protocol range (for the refusal when two
nodes share no version); it is set before the session module reads it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from feral.cli.context import StoreSchema
from feral.storage.db.migrations import Migration
from feral.sync.schema import BASE_SCHEMA, SCHEMA_VERSION, Column

COLOR = Column("color", "text", nullable=True, max_bytes=64, added_in=SCHEMA_VERSION + 1)
NEWER = BASE_SCHEMA.with_column("facts", COLOR)
MIGRATION_SQL = """
ALTER TABLE facts ADD COLUMN color TEXT;
UPDATE facts SET color = opaque ->> '$[0]',
  opaque = CASE json_array_length(opaque) WHEN 1 THEN NULL ELSE json_remove(opaque, '$[0]') END
  WHERE opaque IS NOT NULL;
"""


COLOR_MIGRATION = Migration("0099_test_fact_color", MIGRATION_SQL)


def speak(spec: str) -> None:
    import feral.sync.codec as codec
    from feral.sync.versions import ProtocolRange

    low, high = (int(part) for part in spec.split(":"))
    codec.SPOKEN = ProtocolRange(low, high)


def paint(home: str, node_id: str, fact_id: str, color: str) -> None:
    from feral.storage.memory.memories import commit_local, find_row
    from feral.storage.store import open_sync, run_write
    from feral.sync.hlc import pack
    from feral.sync.types import NodeId, RowId

    conn = open_sync(Path(home) / "feral.db", schema=NEWER, migrations=(COLOR_MIGRATION,))
    try:
        _, row = find_row(conn, fact_id)
        facts = NEWER.by_name("facts")
        values = tuple(row[name] for name in facts.column_names[:-1]) + (color,)

        def stamp(floor: int) -> int:
            return max(floor + 1, pack(time.time_ns() // 1_000_000, 0))

        change = (facts, RowId(fact_id), values)
        run_write(conn, commit_local, NodeId(node_id), stamp, [change])
    finally:
        conn.close()


def main(argv: list[str]) -> None:
    if argv[:1] == ["paint"]:
        paint(*argv[1:5])
        return
    newer: StoreSchema | None = StoreSchema(NEWER, (COLOR_MIGRATION,))
    if argv[:1] == ["--protocols"]:  # this release's schema, another protocol range
        speak(argv[1])
        argv, newer = argv[2:], None
    from feral.cli.main import cli

    cli.main(args=argv, prog_name="feral", obj=newer)


if __name__ == "__main__":
    main(sys.argv[1:])
