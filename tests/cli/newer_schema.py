"""``feral`` as a newer release would be: one more schema version, or another protocol range.

Run as ``python newer_schema.py [--protocols LOW:HIGH] ARGS...``: it registers, through the
public extension points (``feral.sync.schema.add_column`` and
``feral.storage.db.migrations.register_migration``), what a future release might add, a nullable
text column ``color`` appended to ``facts`` (one schema version above this release) and its
migration, then runs the CLI with ARGS. The migration follows the rules of docs/PROTOCOL.md
§10: it moves a value that the database kept opaque, while it was one version behind, into the
new column.

``paint HOME NODE_ID FACT_ID COLOR`` instead writes a fact's color as the newer release's own
code would (one local write through ``commit_local``): no command of this release names it.

``--protocols`` makes the process speak another protocol range (for the refusal when two
nodes share no version); it is set before the session module reads it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from feral.sync.schema import FACTS, SCHEMA_VERSION, Column, add_column

COLOR = Column("color", "text", nullable=True, max_bytes=64, added_in=SCHEMA_VERSION + 1)
MIGRATION_SQL = """
ALTER TABLE facts ADD COLUMN color TEXT;
UPDATE facts SET color = opaque ->> '$[0]',
  opaque = CASE json_array_length(opaque) WHEN 1 THEN NULL ELSE json_remove(opaque, '$[0]') END
  WHERE opaque IS NOT NULL;
"""


def extend() -> None:
    add_column("facts", COLOR)
    from feral.storage.db.migrations import Migration, register_migration

    register_migration(Migration("0099_test_fact_color", MIGRATION_SQL))


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

    conn = open_sync(Path(home) / "feral.db")
    try:
        _, row = find_row(conn, fact_id)
        values = tuple(row[name] for name in FACTS.column_names[:-1]) + (color,)

        def stamp(floor: int) -> int:
            return max(floor + 1, pack(time.time_ns() // 1_000_000, 0))

        change = (FACTS, RowId(fact_id), values)
        run_write(conn, commit_local, NodeId(node_id), stamp, [change])
    finally:
        conn.close()


def main(argv: list[str]) -> None:
    if argv[:1] == ["--protocols"]:
        speak(argv[1])
        argv = argv[2:]
    else:
        extend()
    if argv[:1] == ["paint"]:
        paint(*argv[1:5])
        return
    from feral.cli.main import cli

    cli(args=argv, prog_name="feral")


if __name__ == "__main__":
    main(sys.argv[1:])
