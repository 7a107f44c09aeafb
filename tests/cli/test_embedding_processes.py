"""The embedding queue across real processes: a CLI write with and without a ``feral serve`` on
the same home, and a server killed with SIGKILL in the middle of a drain.

The nodes use the shipped static model. The server is stopped mid-drain by the test-only
``FERAL_TEST_EMBED_HOLD`` (node/embedding.py): while the named file exists, the background drain
holds every batch after the first between embedding it and storing it, so the kill lands at a
known point and nothing here depends on how fast the machine is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from feral.node.embedding import HOLD_ENV
from feral.storage.vectors.vectors import EMBED_BATCH

from .servers import FeralNode, Mesh, wait_until

ROWS = 2_000
WAIT_S = 60.0


def facts_file(tmp_path: Path, rows: int = ROWS) -> Path:
    path = tmp_path / "facts.txt"
    path.write_text("".join(f"parcel {i} went to the depot\n" for i in range(rows)))
    return path


def queue(node: FeralNode) -> tuple[int, int]:
    """``(vectors, rows waiting)`` as ``feral memory stats`` reports them."""
    stats: dict[str, Any] = node.json("memory", "stats")
    return stats["vectors"], stats["embed_pending"]


def read_queue(node: FeralNode) -> tuple[int, int]:
    """:func:`queue` read from the file (quicker to poll than a process)."""
    vectors = node.query("SELECT count(*) FROM facts_vectors")[0][0]
    return int(vectors), int(node.query("SELECT count(*) FROM embed_queue")[0][0])


@pytest.mark.slow
def test_a_cli_import_embeds_what_it_wrote_before_it_exits(tmp_path: Path) -> None:
    with Mesh(tmp_path) as mesh:
        (a,) = mesh.add("a")
        a.run("memory", "import", str(facts_file(tmp_path)))
        assert queue(a) == (ROWS, 0)
        found = a.json("memory", "search", "parcel 7 depot", "--strategy", "vector")
        assert found["results"] and found["notes"] == []


@pytest.mark.slow
def test_a_serve_killed_mid_drain_loses_no_queue_entry_and_a_restart_finishes(
    tmp_path: Path,
) -> None:
    hold = tmp_path / "hold"
    hold.touch()
    with Mesh(tmp_path) as mesh:
        (a,) = mesh.add("a", env={"a": {HOLD_ENV: str(hold)}})
        mesh.start(a)
        # A serve runs on this home: the import commits and leaves the queue to it.
        a.run("memory", "import", str(facts_file(tmp_path)))
        assert a.count("facts") == ROWS
        vectors, waiting = read_queue(a)
        assert vectors + waiting == ROWS and waiting >= ROWS - EMBED_BATCH
        # The server stores one batch and holds the next, embedded but not stored: kill it.
        # The first batch is smaller than EMBED_BATCH when the drain woke between two of the
        # import's transactions (50 lines each, node/absorb/absorb_batch.py).
        assert wait_until(lambda: read_queue(a)[0] > 0, WAIT_S)
        stored = read_queue(a)[0]
        assert 0 < stored <= EMBED_BATCH
        a.kill()
        assert queue(a) == (stored, ROWS - stored)  # every entry still there
        assert a.json("sync", "status")["embed_pending"] == ROWS - stored
        assert f"{ROWS - stored} row(s) waiting" in a.run("memory", "stats").stdout
        # Found by full text meanwhile; the restarted server drains the rest.
        assert a.json("memory", "search", "parcel 1999 depot", "--strategy", "hybrid")["results"]
        del a.env[HOLD_ENV]
        mesh.start(a)
        assert wait_until(lambda: read_queue(a) == (ROWS, 0), WAIT_S), read_queue(a)
        assert queue(a) == (ROWS, 0)
        assert "empty" in a.run("sync", "status").stdout
