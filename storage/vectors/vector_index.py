"""The vectors of every embedded table held in memory, one float32 matrix each, for ``serve``.

sqlite-vec's brute-force scan of 100k vectors took about eleven times as long as numpy's
product of the same vectors held as one matrix (benchmarks/vector_bench.py measures both), so a
long-running server keeps such a copy. It is loaded whole at the first search, kept up to date
by the node's own embedding writes (:func:`~feral.storage.vectors.vectors.store_vectors` tells it
what changed: it is a :class:`~feral.storage.vectors.vectors.VectorSink`), and loaded again whenever
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

from feral.storage.db.connection import Connection, DatabaseError
from feral.sync.schema import Table

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
    def of(cls, dim: int, rowids: npt.NDArray[np.int64], rows: Floats) -> _Matrix:
        """From every vector of a table (``rows`` becomes the matrix: scaled in place)."""
        norms = np.linalg.norm(rows, axis=1)
        keep = norms > 0
        if not keep.all():
            rows, rowids, norms = rows[keep], rowids[keep], norms[keep]
        if not rows.flags.writeable:
            rows = rows.copy()
        rows /= norms[:, None]
        return cls(dim, rowids.tolist(), rows)

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
        # einsum, not ``@``: one pass on this thread. ``@`` is BLAS's matrix-vector product,
        # which wakes a pool of threads for a 10k-row matrix; on a busy two-core machine their
        # spinning cost several times the CPU of the product itself (7.7 ms against 1.4 ms of
        # CPU for 10k rows of 384 dimensions, and 30 ms against 1.5 ms of wall time).
        scores = np.einsum("ij,j->i", self.rows[:n], query)
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
        :func:`~feral.storage.vectors.vectors.search_similar` answers, from memory."""
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

    def refresh(self, conn: Connection) -> None:
        """Load every vector now if the copy is stale (the absorb pipeline calls it before its
        write transaction, so that transaction finds the copy current and loads nothing)."""
        self._refresh(conn)

    def _refresh(self, conn: Connection) -> None:
        """Load every vector again if the token moved; token and vectors come from one read
        transaction, so they always belong together (inside a write's transaction, that one)."""
        if vector_generation(conn) == self._generation:
            return
        own = not conn.in_transaction
        if own:
            conn.execute("BEGIN")
        try:
            generation = vector_generation(conn)
            tables = self._load(conn)
        finally:
            if own:
                conn.execute("COMMIT")
        self._tables, self._generation = tables, generation
        self.loads += 1

    @staticmethod
    def _load(conn: Connection) -> dict[str, _Matrix]:
        in_use = embedder_in_use(conn)
        if in_use is None:
            return {}
        dim = in_use[1]
        tables = {}
        for table in VECTOR_TABLES:
            found = read_chunks(conn, f"{table.name}_vec", dim)
            if found is None:
                found = read_rows(conn, f"{table.name}_vec", dim)
            tables[table.name] = _Matrix.of(dim, *found)
        return tables


Vectors = tuple[npt.NDArray[np.int64], Floats]


def read_rows(conn: Connection, name: str, dim: int) -> Vectors:
    """Every ``(rowid, vector)`` of the sqlite-vec table ``name``, through sqlite-vec itself:
    right for any version of it, but one call into the extension per row (6.2 s for 100k rows
    of 256 dimensions on a busy two-core machine, where :func:`read_chunks` took 1.9-3.0 s)."""
    pairs = conn.execute(f"SELECT rowid, embedding FROM {name}").fetchall()
    rowids = np.array([int(r) for r, _ in pairs], dtype=np.int64)
    blob = b"".join(bytes(b) for _, b in pairs)
    return rowids, np.frombuffer(blob, dtype="<f4").reshape(len(pairs), dim)


def read_chunks(conn: Connection, name: str, dim: int) -> Vectors | None:
    """The same as :func:`read_rows`, read from the tables where sqlite-vec keeps a vec0
    table's vectors: chunks of slots, each with a validity bitmap, the slots' rowids
    (int64) and their float32 vectors. A chunk of 1,024 slots is one row, so this reads a
    hundred rows where :func:`read_rows` reads 100k.

    That layout is sqlite-vec's own business: anything that does not fit it (another version,
    a missing table, slots that disagree with its list of rowids) returns ``None``, and the
    caller reads through sqlite-vec instead.
    """
    try:
        chunks = conn.execute(
            f"SELECT c.size, c.validity, c.rowids, v.vectors FROM {name}_chunks c "
            f"JOIN {name}_vector_chunks00 v ON v.rowid = c.chunk_id ORDER BY c.chunk_id"
        ).fetchall()
        expected = {int(r) for (r,) in conn.execute(f"SELECT rowid FROM {name}_rowids")}
    except DatabaseError:
        return None
    shaped = []
    for size, validity, rowids, vectors in chunks:
        if len(rowids) != 8 * size or len(vectors) != 4 * dim * size or len(validity) * 8 < size:
            return None
        bits = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")[:size]
        shaped.append((bits.astype(bool), rowids, vectors, size))
    count = sum(int(keep.sum()) for keep, *_ in shaped)
    if count != len(expected):
        return None
    # One matrix filled in place: on a busy machine every fresh 100 MB array costs seconds of
    # page faults, so there is no concatenating of per-chunk copies.
    ids = np.empty(count, dtype=np.int64)
    matrix = np.empty((count, dim), dtype=np.float32)
    at = 0
    for keep, rowids, vectors, size in shaped:
        n = int(keep.sum())
        ids[at : at + n] = np.frombuffer(rowids, dtype="<i8")[keep]
        matrix[at : at + n] = np.frombuffer(vectors, dtype="<f4").reshape(size, dim)[keep]
        at += n
    if set(ids.tolist()) != expected:
        return None
    return ids, matrix
