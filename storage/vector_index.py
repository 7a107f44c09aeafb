"""The vectors of every embedded table held in memory, one float32 matrix each, for ``serve``.

sqlite-vec's brute-force scan of 100k vectors took about eleven times as long as numpy's
product of the same vectors held as one matrix (benchmarks/vector_bench.py measures both), so a
long-running server keeps such a copy. It is loaded whole at the first search, kept up to date
by the node's own embedding writes (:func:`~feral.storage.vectors.store_vectors` tells it what
changed: it is a :class:`~feral.storage.vectors.VectorSink`), and loaded again whenever
``meta.vec_generation`` says some other write changed vectors (a nuke, another process that
embedded, a new embedder). A short CLI command would read every vector to answer one query, so
it searches through sqlite-vec instead. The copy costs ``4 * dim`` bytes a row (100 MB at 100k
rows of 256 dimensions).

Every method runs on the database thread (inside ``Store.read`` or ``Store.write``), so the copy
needs no lock of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from feral.sync.schema import Table

from .connection import Connection
from .vectors import VECTOR_TABLES, embedder_in_use, vector_generation

__all__ = ["VectorIndex"]

Floats = npt.NDArray[np.float32]


class _Matrix:
    """One table's unit vectors as the rows of a matrix, with the rowid of each row.

    A zero vector (a text with no words) has no direction and is left out, as sqlite-vec gives
    it no distance: it is no match for anything.
    """

    def __init__(self, dim: int, rowids: Sequence[int] = (), rows: Floats | None = None) -> None:
        self.rows = rows if rows is not None else np.zeros((0, dim), dtype=np.float32)
        self.rowids = np.asarray(rowids, dtype=np.int64)
        self.count = len(self.rowids)
        self.where = {int(r): i for i, r in enumerate(self.rowids)}

    @classmethod
    def of(cls, dim: int, rowids: list[int], blobs: list[bytes]) -> _Matrix:
        rows = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dim)
        norms = np.linalg.norm(rows, axis=1)
        keep = norms > 0
        units = (rows[keep] / norms[keep, None]).astype(np.float32)
        return cls(dim, [r for r, k in zip(rowids, keep, strict=True) if k], units)

    def put(self, rowid: int, blob: bytes) -> None:
        vector = np.frombuffer(blob, dtype="<f4")
        norm = float(np.linalg.norm(vector))
        if norm == 0:
            self.remove(rowid)
            return
        index = self.where.get(rowid)
        if index is None:
            index = self._append(rowid)
        self.rows[index] = vector / norm

    def _append(self, rowid: int) -> int:
        if self.count == len(self.rows):  # grow by half: appends stay amortised O(1)
            extra = max(64, len(self.rows) // 2)
            self.rows = np.concatenate(
                [self.rows, np.zeros((extra, self.rows.shape[1]), np.float32)]
            )
            self.rowids = np.concatenate([self.rowids, np.zeros(extra, np.int64)])
        index = self.count
        self.rowids[index] = rowid
        self.where[rowid] = index
        self.count += 1
        return index

    def remove(self, rowid: int) -> None:
        """Move the last row into the gap: order does not matter, a full scan reads all."""
        index = self.where.pop(rowid, None)
        if index is None:
            return
        last = self.count - 1
        if index != last:
            self.rows[index] = self.rows[last]
            self.rowids[index] = self.rowids[last]
            self.where[int(self.rowids[index])] = index
        self.count = last

    def nearest(self, query: Floats, k: int) -> list[tuple[int, float]]:
        """The ``k`` rows of highest cosine with the unit vector ``query``, nearest first."""
        n = self.count
        if n == 0 or k <= 0:
            return []
        scores = self.rows[:n] @ query
        top = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
        order = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self.rowids[i]), float(scores[i])) for i in order]


class VectorIndex:
    """An in-memory copy of the vector tables that answers nearest-neighbour queries."""

    def __init__(self) -> None:
        self._tables: dict[str, _Matrix] = {}
        self._generation: int | None = None
        self.loads = 0
        """How many times the whole copy was read from the database (tests, benchmarks)."""

    def nearest(
        self, conn: Connection, table: Table, query_vector: bytes, k: int
    ) -> list[tuple[int, float]]:
        """The ``k`` nearest rows of ``table`` as ``(rowid, cosine)``: what
        :func:`~feral.storage.vectors.search_similar` answers, from memory."""
        self._refresh(conn)
        matrix = self._tables.get(table.name)
        query = np.frombuffer(query_vector, dtype="<f4")
        norm = float(np.linalg.norm(query))
        if matrix is None or norm == 0:
            return []
        return matrix.nearest((query / norm).astype(np.float32), k)

    def changed(
        self, before: int, after: int, changes: Sequence[tuple[str, int, bytes | None]]
    ) -> None:
        """Apply a write's changes if the copy was up to date before it (else it reloads)."""
        if self._generation != before:
            return
        for name, rowid, blob in changes:
            matrix = self._tables.get(name)
            if matrix is None:
                self._generation = None  # a table it never loaded: start afresh
                return
            if blob is None:
                matrix.remove(rowid)
            else:
                matrix.put(rowid, blob)
        self._generation = after

    def _refresh(self, conn: Connection) -> None:
        # The token first, then the vectors: a write committed in between makes the token
        # stale (one more load), never the vectors.
        generation = vector_generation(conn)
        if generation == self._generation:
            return
        self._tables = self._load(conn)
        self._generation = generation
        self.loads += 1

    @staticmethod
    def _load(conn: Connection) -> dict[str, _Matrix]:
        in_use = embedder_in_use(conn)
        if in_use is None:
            return {}
        tables = {}
        for table in VECTOR_TABLES:
            pairs = conn.execute(f"SELECT rowid, embedding FROM {table.name}_vec").fetchall()
            tables[table.name] = _Matrix.of(
                in_use[1], [int(r) for r, _ in pairs], [bytes(b) for _, b in pairs]
            )
        return tables
