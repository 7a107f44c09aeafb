"""Embedding off the write path: the queue drained in batches, between transactions.

A write commits its rows and their queue entries (storage/vectors/vectors.py's triggers) in one
transaction and returns; nothing is embedded inside it. The queue is drained later:

- by ``feral serve`` in the background (:meth:`Embedding.start`), woken by local writes, merged
  pages and commits of other processes on the same home;
- at the end of a CLI command that wrote (cli/context.py), unless a ``feral serve`` runs on the
  same home: then the command leaves the queue to it, so it returns at once and two processes
  never contend for the write lock to embed the same rows.

Each batch reads its texts, runs the embedder on a worker thread with no transaction open, and
stores the vectors through the store's one writer in a short transaction; the loop yields
between batches, so links and the HTTP API keep their turns even with a slow model. A crash
loses nothing: an entry leaves the queue only in the transaction that stores its vector.
Rows still queued are found by full text meanwhile (they have no vector yet).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from feral.node.home.serve_runtime import SERVE_LOCK_FILE, lock_file, serve_running
from feral.storage.store import Store
from feral.storage.vectors.vectors import (
    EMBED_BATCH,
    Embedder,
    embed_texts,
    embedder_in_use,
    ensure_vector_tables,
    queue_length,
    queued_rows,
    reset_vectors,
    store_vectors,
)
from feral.sync.errors import NotAvailable

if TYPE_CHECKING:
    from feral.storage.vectors.vector_index import VectorIndex

__all__ = ["HOLD_ENV", "SERVE_LOCK_FILE", "Embedding", "serve_running", "serving_lock"]

log = logging.getLogger("feral.embedding")

HOLD_ENV = "FERAL_TEST_EMBED_HOLD"
"""For tests only: a path; while a file is there, the background drain holds every batch after
the first between embedding it and storing it, so a test can kill a real ``feral serve`` in the
middle of a drain. A user never needs it."""
RETRY_S = 1.0
HOLD_POLL_S = 0.05

Progress = Callable[[int, int], None]


class Embedding:
    """One node's embedding queue: drained on demand (:meth:`drain`) or in the background."""

    def __init__(self, store: Store, embedder: Embedder | None) -> None:
        self.store = store
        self.embedder = embedder
        self._index: VectorIndex | None = None
        self.woken = False
        """Whether this process wrote something that queued rows (a CLI command then drains)."""
        self._event: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._hold = os.environ.get(HOLD_ENV)
        self._stored_batches = 0
        self._failing = False

    @property
    def active(self) -> bool:
        """Whether there is anything to embed with: a model, and a database that takes writes."""
        return self.embedder is not None and self.store.read_only is None

    async def prepare(self) -> None:
        """At open: make the vector tables match the embedder (a change re-queues every row).

        Only a change writes; draining is left to the background or the command's end (a
        command that only reads still drains what it finds queued by a change of model here).
        """
        if self.embedder is None or not self.active:
            return
        wanted = (self.embedder.name, self.embedder.dim)
        if await self.store.read(embedder_in_use) != wanted:
            await self.store.write(ensure_vector_tables, self.embedder)
            self.woken = True

    def wake(self) -> None:
        """Something was queued: the background drain (if running) looks at the queue."""
        self.woken = True
        if self._event is not None:
            self._event.set()

    @property
    def index(self) -> VectorIndex | None:
        """The vectors held in memory, told of every batch stored; ``None`` with no embedder.

        Loaded at the first search, not here: a search reads every vector anyway (there is no
        index on disk), so holding them costs a short command nothing and spares every later
        search of a long-running one the read (storage/vectors/vector_index.py).
        """
        if self._index is None and self.embedder is not None:
            from feral.storage.vectors.vector_index import VectorIndex

            self._index = VectorIndex()
        return self._index

    @index.setter
    def index(self, index: VectorIndex | None) -> None:
        self._index = index

    async def reembed(self, progress: Progress | None = None) -> int:
        """Drop every vector and embed every episode and fact again with the current embedder.

        ``progress`` gets ``(done, total)`` once the rows are queued and after each batch.
        An interrupted run loses nothing: the rest stays queued for the next drain. Returns how
        many rows were embedded.

        Raises:
            NotAvailable: no embedder (``memory.embedder`` is ``"none"``).
        """
        if self.embedder is None:
            raise NotAvailable(
                'nothing to re-embed: vector search is off (memory.embedder is "none")'
            )
        await self.store.write(reset_vectors, self.embedder)
        return await self.drain(progress)

    async def pending(self) -> int:
        """How many rows wait to be embedded."""
        return await self.store.read(queue_length)

    async def step(self, limit: int = EMBED_BATCH) -> tuple[int, int]:
        """Embed one batch: ``(rows read from the queue, rows stored)``; ``(0, 0)`` when empty."""
        embedder = self.embedder
        if embedder is None or not self.active:
            return 0, 0
        batch = await self.store.read(queued_rows, limit)
        if not batch:
            return 0, 0
        vectors = await asyncio.to_thread(embed_texts, embedder, batch)
        await self._held()
        stored = await self.store.write(store_vectors, embedder, batch, vectors, self.index)
        self._stored_batches += 1
        return len(batch), stored

    async def drain(self, progress: Progress | None = None) -> int:
        """Embed until the queue is empty; ``progress`` gets ``(done, total)`` after each batch.

        ``total`` grows if rows are queued meanwhile. Returns how many rows were stored.
        """
        total = await self.pending() if progress else 0
        if progress:
            progress(0, total)
        stored = 0
        while True:
            read, done = await self.step()
            if not read:
                return stored
            stored += done
            if progress:
                remaining = await self.pending()
                total = max(total, stored + remaining)
                progress(total - remaining, total)
            await asyncio.sleep(0)  # the writer and the loop go to others between batches

    # -- the background drain of ``feral serve`` --------------------------------------------

    def start(self) -> None:
        """Drain in the background from now on (first whatever an earlier run left queued)."""
        if self._task is None and self.active:
            self._event = asyncio.Event()
            self._event.set()
            self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """End the background drain; a batch not yet stored stays queued."""
        task, self._task, self._event = self._task, None, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        """Supervised: a failed batch (a lock held too long by another process, a full disk)
        is logged once and tried again later; the rows stay queued."""
        assert self._event is not None
        while True:
            await self._event.wait()
            self._event.clear()
            try:
                await self.drain()
            except Exception as exc:
                if not self._failing:
                    log.warning("! embedding paused, will retry: %s", exc)
                self._failing = True
                await asyncio.sleep(RETRY_S)
                self._event.set()
            else:
                if self._failing:
                    log.info("= embedding resumed")
                self._failing = False

    async def _held(self) -> None:
        if self._hold and self._task is not None and self._stored_batches:
            while os.path.exists(self._hold):
                await asyncio.sleep(HOLD_POLL_S)


@contextlib.contextmanager
def serving_lock(home: Path) -> Iterator[None]:
    """Held by ``feral serve`` while it runs: a shared lock on ``HOME/serve.lock``.

    The operating system releases it when the process ends, however it ends (kill -9 too), so
    a stale file never makes a CLI command leave its queue to a server that is gone.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: commands always drain themselves
        yield
        return
    fd = lock_file(home / SERVE_LOCK_FILE)
    if fd is None:  # a read-only home: no command writes there to leave its queue to us
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)
