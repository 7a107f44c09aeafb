"""The vectors of every embedded table held in memory, one float32 matrix each.

A search scans a table's vectors as one matrix: numpy's product of 6k rows takes well under a
millisecond, and reading them out of the database takes most of a cold search's time
(benchmarks/vector_bench.py measures both). So a node keeps the matrix once it has searched
(:class:`VectorIndex`): it is loaded whole at the first search, kept up to date by the node's own
embedding writes (:func:`~feral.storage.vectors.vectors.store_vectors` tells it what changed: it is
a :class:`~feral.storage.vectors.vectors.VectorSink`), and loaded again whenever
``meta.vec_generation`` says some other write changed vectors (a nuke, another process that
embedded, a new embedder). :func:`scan_table` answers one query from a fresh read, for callers that
hold no copy. The copy costs ``4 * dim`` bytes a row (100 MB at 100k rows of 256 dimensions).

Every method runs on the database thread (inside ``Store.read`` or ``Store.write``), so the copy
needs no lock of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from feral.storage.db.connection import Connection
from feral.storage.db.errors import CorruptDatabase, EmbeddingError
from feral.sync.schema import Table

from .vectors import VECTOR_TABLES, embedder_in_use, vector_generation

__all__ = ["Context", "VectorIndex", "read_vectors", "scan_table"]

Floats = npt.NDArray[np.float32]


class Context(Protocol):
    """How a row's cosine takes in the row said just before it: ``share`` of it.

    A reply such as "Yes, it was amazing!" carries no content of its own; what it is about was
    said just before. The stored vector stays the embedding of the text as said (nothing
    derived is replicated or differs between devices), and since the cosine is linear in the
    vector, the cosine of ``(1 - share) * v + share * v_before`` with a query is the same mix
    of the two rows' cosines: the index mixes the scores, not the vectors, and divides by the
    mixed vector's length (a cosine, as the plain one is: on LoCoMo's tuning half the hybrid's
    R@10 read 0.801 so against 0.796 without). :meth:`before` names, from the rows in the database,
    the pairs ``(rowid, rowid said just before it)`` whose first rowid is ``since`` or above;
    the index keeps them, and asks again only from the lowest row it was given since (a write
    between two searches reads its own rows, not the table: reading all of 5,882 LoCoMo turns
    took 11 ms). storage/search/neighbours.py says which rows are said before which.
    """

    @property
    def share(self) -> float: ...

    def before(self, conn: Connection, since: int = 0) -> Iterable[tuple[int, int]]: ...


class _Matrix:
    """One table's unit vectors as the rows of a matrix, with the rowid of each row.

    A zero vector (a text with no words) has no direction and is left out: it is no match for
    anything.
    """

    def __init__(self, dim: int, rowids: Sequence[int] = (), rows: Floats | None = None) -> None:
        self.rows = rows if rows is not None else np.zeros((0, dim), dtype=np.float32)
        self.rowids = np.asarray(rowids, dtype=np.int64)
        self.count = len(self.rowids)
        self.where = {int(r): i for i, r in enumerate(self.rowids)}
        self.version = 0
        """Counts the changes to the rows: the positions of :meth:`before` are rebuilt when
        it moves."""
        self._before: tuple[Context, int, npt.NDArray[np.int64], Floats] | None = None
        self._pairs: dict[int, int] = {}
        """Each row said just after another, with that row's rowid, as :meth:`before` read."""
        self._scored: tuple[tuple[bytes, Context | None, int], Floats] | None = None
        """The last query's scores (one hybrid search asks for them up to three times: the
        vector leg, the cosines of the lexical candidates, those of the joined neighbours)."""
        self.read_from: int | None = 0
        """The lowest rowid whose pair may have changed since :attr:`_pairs` was read (None:
        none): a row added reads from itself on, a row rewritten (its text may have changed)
        reads them all again."""

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
            self.read_from = rowid if self.read_from is None else min(self.read_from, rowid)
        else:
            self.read_from = 0
        self.rows[index] = vector / norm
        self.version += 1

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
        self.version += 1
        last = self.count - 1
        if index != last:
            self.rows[index] = self.rows[last]
            self.rowids[index] = self.rowids[last]
            self.where[int(self.rowids[index])] = index
        self.count = last

    def before(self, conn: Connection, context: Context) -> tuple[npt.NDArray[np.int64], Floats]:
        """For each row, the position of the row said just before it (-1: none), and the
        length of the two mixed (1 where none): read from ``conn`` once per change of rows."""
        cached = self._before
        if cached is not None and cached[0] == context and cached[1] == self.version:
            return cached[2], cached[3]
        self._read_pairs(conn, context, cached is not None and cached[0] == context)
        positions = np.full(self.count, -1, dtype=np.int64)
        for rowid, earlier in self._pairs.items():
            at, then = self.where.get(rowid), self.where.get(earlier)
            if at is not None and then is not None:
                positions[at] = then
        has = positions >= 0
        lengths = np.ones(self.count, dtype=np.float32)
        share = context.share
        agree = np.einsum("ij,ij->i", self.rows[: self.count][has], self.rows[positions[has]])
        lengths[has] = np.sqrt((1 - share) ** 2 + share**2 + 2 * share * (1 - share) * agree)
        self._before = (context, self.version, positions, lengths)
        return positions, lengths

    def _read_pairs(self, conn: Connection, context: Context, same_context: bool) -> None:
        """Bring :attr:`_pairs` up to date: from :attr:`read_from` on, or all for a new context."""
        since = self.read_from if same_context else 0
        if since is None:
            return
        if since == 0:
            self._pairs = {}
        else:
            self._pairs = {r: e for r, e in self._pairs.items() if r < since}
        self._pairs.update(context.before(conn, since))
        self.read_from = None

    def scores(self, conn: Connection, query: Floats, context: Context | None = None) -> Floats:
        """Every row's cosine with the unit vector ``query``, each mixed with the row said
        before it as ``context`` says."""
        if len(query) != self.rows.shape[1]:
            raise EmbeddingError(
                f"a query of {len(query)} dimensions against vectors of {self.rows.shape[1]}"
            )
        # einsum, not ``@``: one pass on this thread. ``@`` is BLAS's matrix-vector product,
        # which wakes a pool of threads for a 10k-row matrix; on a busy two-core machine their
        # spinning cost several times the CPU of the product itself (7.7 ms against 1.4 ms of
        # CPU for 10k rows of 384 dimensions, and 30 ms against 1.5 ms of wall time).
        asked = (query.tobytes(), context, self.version)
        if self._scored is not None and self._scored[0] == asked:
            return self._scored[1]
        own: Floats = np.einsum("ij,j->i", self.rows[: self.count], query)
        scores = own if context is None or self.count == 0 else self._mixed(conn, own, context)
        self._scored = (asked, scores)
        return scores

    def _mixed(self, conn: Connection, own: Floats, context: Context) -> Floats:
        positions, lengths = self.before(conn, context)
        has = positions >= 0
        mixed: Floats = own.copy()
        mixed[has] = (1 - context.share) * own[has] + context.share * own[positions[has]]
        mixed[has] /= lengths[has]
        return mixed

    def nearest(
        self, conn: Connection, query: Floats, k: int, context: Context | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` rows of highest cosine with the unit vector ``query``, nearest first."""
        scores = self.scores(conn, query, context)
        n = self.count
        if n == 0 or k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
        order = top[np.argsort(-scores[top], kind="stable")]
        return list(zip(self.rowids[order].tolist(), scores[order].tolist(), strict=True))


class VectorIndex:
    """An in-memory copy of the vector tables that answers nearest-neighbour queries."""

    def __init__(self) -> None:
        self._tables: dict[str, _Matrix] = {}
        self._generation: int | None = None
        self.loads = 0
        """How many times the whole copy was read from the database (tests, benchmarks)."""

    def nearest(
        self,
        conn: Connection,
        table: Table,
        query_vector: bytes,
        k: int,
        context: Context | None = None,
    ) -> list[tuple[int, float]]:
        """The ``k`` nearest rows of ``table`` as ``(rowid, cosine)``: what
        :func:`~feral.storage.vectors.vectors.search_similar` answers, from memory (with
        ``context``, each cosine mixed with the row's said before it)."""
        self._refresh(conn)
        return _nearest(conn, self._tables.get(table.name), query_vector, k, context)

    def cosines(
        self,
        conn: Connection,
        table: Table,
        query_vector: bytes,
        rowids: Iterable[int],
        context: Context | None = None,
    ) -> dict[int, float]:
        """The cosine with the query of each of ``rowids`` that has a vector, as
        :meth:`nearest` scores it."""
        self._refresh(conn)
        matrix = self._tables.get(table.name)
        query = _unit(query_vector)
        if matrix is None or query is None:
            return {}
        scores = matrix.scores(conn, query, context)
        at = [(r, matrix.where[r]) for r in rowids if r in matrix.where]
        return {rowid: float(scores[position]) for rowid, position in at}

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
        return {
            t.name: _Matrix.of(in_use[1], *read_vectors(conn, t, in_use[1])) for t in VECTOR_TABLES
        }


def _unit(query_vector: bytes) -> Floats | None:
    query = np.frombuffer(query_vector, dtype="<f4")
    norm = float(np.linalg.norm(query))
    return (query / norm).astype(np.float32) if norm > 0 else None


def _nearest(
    conn: Connection,
    matrix: _Matrix | None,
    query_vector: bytes,
    k: int,
    context: Context | None,
) -> list[tuple[int, float]]:
    query = _unit(query_vector)
    if matrix is None or query is None:
        return []
    return matrix.nearest(conn, query, k, context)


def scan_table(
    conn: Connection,
    table: Table,
    query_vector: bytes,
    k: int,
    context: Context | None = None,
) -> list[tuple[int, float]]:
    """The ``k`` nearest rows of ``table`` from a fresh read of its vectors (no copy kept)."""
    in_use = embedder_in_use(conn)
    if in_use is None:
        return []
    matrix = _Matrix.of(in_use[1], *read_vectors(conn, table, in_use[1]))
    return _nearest(conn, matrix, query_vector, k, context)


def read_vectors(conn: Connection, table: Table, dim: int) -> tuple[npt.NDArray[np.int64], Floats]:
    """Every ``(rowid, vector)`` of ``table`` as an array of rowids and a writable matrix.

    The BLOBs are joined into one buffer that becomes the matrix without a further copy.

    Raises:
        CorruptDatabase: a stored vector is not ``dim`` float32 values.
    """
    pairs = conn.execute(f"SELECT rowid, embedding FROM {table.name}_vectors").fetchall()
    rowids = np.fromiter((r for r, _ in pairs), dtype=np.int64, count=len(pairs))
    buffer = bytearray().join(b for _, b in pairs)
    if len(buffer) != 4 * dim * len(pairs) or any(len(b) != 4 * dim for _, b in pairs):
        raise CorruptDatabase(f"a stored vector of {table.name} is not {dim} float32 values")
    return rowids, np.frombuffer(buffer, dtype="<f4").reshape(len(pairs), dim)
