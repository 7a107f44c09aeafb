"""A new device from a snapshot against replaying the log, for the same rows, in one run.

``python -m benchmarks.snapshot_bench [--rows N] [--edits K] [--json]``

A source store holds N facts, each written once and edited K times (so its log holds
N x (K + 1) entries, as a store that lived does: facts are edited, archived and boosted). Two
empty stores then take everything in: one by replaying the log (``changes_since`` pages,
encoded and decoded as on the wire, applied with ``apply_page``), one from a snapshot
(``snapshot_pages`` encoded and decoded, applied with ``apply_snapshot_page``). Both must end
with the same export as the source. The figure is replay time / snapshot time.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from feral.storage.db.connection import Connection
from feral.storage.log import delta_log, snapshot
from feral.storage.memory import export
from feral.storage.store import open_sync, run_write
from feral.sync.codec import decode_message, decode_page, encode_message, encode_page
from feral.sync.delta import MAX_PAGE_DELTAS, Delta
from feral.sync.snapshot_messages import SnapshotPage
from feral.sync.types import NodeId, RowId

__all__ = ["run_snapshot"]

ORIGIN = NodeId("b" * 32)
NOW_MS = 1_700_000_000_000
SKEW_MS = 300_000


def _fill(conn: Connection, rows: int, edits: int) -> None:
    hlc = (NOW_MS - 86_400_000) << 16
    for version in range(edits + 1):
        for start in range(0, rows, 5_000):
            batch = []
            for i in range(start, min(rows, start + 5_000)):
                hlc += 1
                row_id = f"f{i:08d}"
                values = (row_id, f"subject {i}", "likes", f"thing {i} v{version}", 0.9, None,
                          NOW_MS, False)  # fmt: skip
                batch.append(Delta("facts", RowId(row_id), hlc, ORIGIN, values))
            run_write(conn, delta_log.apply_deltas, batch)


def _replay(source: Connection, target: Connection) -> None:
    while pages := delta_log.changes_since(source, delta_log.version_vector(target),
                                           MAX_PAGE_DELTAS):  # fmt: skip
        for page in pages:
            received = decode_page(encode_page(page))
            run_write(target, delta_log.apply_page, received, now_ms=NOW_MS,
                      max_skew_ms=SKEW_MS, checked=True)  # fmt: skip


def _from_snapshot(source: Connection, target: Connection) -> None:
    cursor = snapshot.start_snapshot(source)
    while True:
        pages = snapshot.snapshot_pages(source, cursor, MAX_PAGE_DELTAS)
        for page in pages:
            received = decode_message(encode_message(page))
            assert isinstance(received, SnapshotPage)
            run_write(target, snapshot.apply_snapshot_page, received, now_ms=NOW_MS,
                      max_skew_ms=SKEW_MS, peer=None)  # fmt: skip
        last = pages[-1]
        if last.final:
            return
        from feral.sync.snapshot import SnapshotCursor

        after = last.through if last.through is not None else ""
        table = last.table if last.through is not None else last.table + 1
        cursor = SnapshotCursor(cursor.vector, cursor.entries, table, after)


def run_snapshot(rows: int = 100_000, edits: int = 1) -> dict[str, float | int | bool]:
    """Both ways into empty stores; returns the timings, the ratio and whether exports match."""
    with tempfile.TemporaryDirectory(prefix="feral-snapshot-bench-") as scratch:
        base = Path(scratch)
        source, by_log, by_snapshot = (open_sync(base / f"{n}.db") for n in ("a", "b", "c"))
        _fill(source, rows, edits)
        started = time.perf_counter()
        _replay(source, by_log)
        replay_s = time.perf_counter() - started
        started = time.perf_counter()
        _from_snapshot(source, by_snapshot)
        snapshot_s = time.perf_counter() - started
        want = list(export.export_lines(source))
        same = want == list(export.export_lines(by_log)) == list(export.export_lines(by_snapshot))
        same = same and delta_log.version_vector(by_snapshot) == delta_log.version_vector(source)
        for conn in (source, by_log, by_snapshot):
            conn.close()
    return {"rows": rows, "log_entries": rows * (edits + 1), "replay_s": round(replay_s, 3),
            "snapshot_s": round(snapshot_s, 3), "snapshot_vs_replay": replay_s / snapshot_s,
            "same_export": same}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.snapshot_bench")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--edits", type=int, default=1, help="edits per row after its write")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run_snapshot(args.rows, args.edits)
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        for key, value in result.items():
            print(f"{key:20} {value}")
    return 0 if result["same_export"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
