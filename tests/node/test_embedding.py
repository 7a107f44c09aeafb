"""Embedding off the write path (node/embedding.py): writes and merged pages commit without
waiting for the model; ``serve`` drains the queue in the background; unembedded rows are found
by full text. The embedders are the shipped static model behind a gate or a sleep, so what is
asserted is the order of events and the state of the database, never a duration.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
import sqlean

from feral.node.node import DATABASE_FILE
from feral.node.recall.search import NOT_EMBEDDED
from feral.storage.db.connection import Connection
from feral.storage.encoders.embedders import load_embedder
from feral.storage.log import delta_log
from feral.storage.memory import memories
from feral.storage.vectors.vectors import Embedder
from feral.sync.delta import MAX_PAGE_DELTAS

from .support import Mesh, apply_page, serving, wait_until

STATIC = load_embedder("minilm-static-256")


class SlowEmbedder:
    """The shipped static model, a little slower per call: counts the calls and the texts."""

    def __init__(self, inner: Embedder | None = STATIC, delay_s: float = 0.01) -> None:
        assert inner is not None
        self.inner = inner
        self.delay_s = delay_s
        self.calls: list[int] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        time.sleep(self.delay_s)
        self.calls.append(len(texts))
        return self.inner.embed(texts)


class GatedEmbedder(SlowEmbedder):
    """Holds every call that embeds queued rows until the test opens the gate; a search's
    query (one of ``queries``) passes at once."""

    def __init__(self, queries: Sequence[str]) -> None:
        super().__init__(delay_s=0)
        self.queries = set(queries)
        self.entered = threading.Event()
        self.gate = threading.Event()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not set(texts) <= self.queries:
            self.entered.set()
            assert self.gate.wait(30), "the test never opened the gate"
        return super().embed(texts)


@pytest.fixture
async def mesh(tmp_path: Path) -> AsyncIterator[Mesh]:
    mesh = Mesh(tmp_path)
    mesh.add("a", "b")
    yield mesh
    await mesh.aclose()


def notes(n: int) -> list[tuple[str, str, str]]:
    return [("user", "note", f"parcel {i} went to the depot") for i in range(n)]


def committed(home: Path, sql: str) -> int:
    """One value read by another connection: what is committed, not what this one holds."""
    conn = sqlean.connect(str(home / DATABASE_FILE))
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


@pytest.mark.slow
async def test_an_import_commits_and_returns_before_anything_is_embedded(mesh: Mesh) -> None:
    embedder = SlowEmbedder()
    node = await mesh.open("a", embedder=embedder)
    assert await node.import_facts(notes(1200), batch=500) == 1200
    assert embedder.calls == []  # the import never waited for the model
    home = mesh.home("a")
    assert committed(home, "SELECT count(*) FROM facts") == 1200
    assert committed(home, "SELECT count(*) FROM embed_queue") == 1200
    stats = await node.stats()
    assert (stats["vectors"], stats["embed_pending"]) == (0, 1200)
    assert await node.embed_queued() == 1200
    assert sum(embedder.calls) == 1200 and len(embedder.calls) >= 3  # in batches
    stats = await node.stats()
    assert (stats["vectors"], stats["embed_pending"]) == (1200, 0)


async def test_rows_not_yet_embedded_are_found_by_full_text(mesh: Mesh) -> None:
    node = await mesh.open("a", embedder=SlowEmbedder())
    await node.import_facts(notes(30))
    fact = await node.remember(("boiler", "serviced_on", "Monday"))
    for strategy in ("fts", "hybrid"):
        found = await node.search("boiler serviced", strategy=strategy)
        assert found.results and found.results[0]["id"] == fact["id"], strategy
        assert found.results[0]["vector_score"] == 0.0
    vector = await node.search("boiler serviced", strategy="vector")  # no error, and says why
    assert vector.results == [] and NOT_EMBEDDED in vector.notes
    await node.embed_queued()
    vector = await node.search("boiler serviced", strategy="vector")
    assert vector.results[0]["id"] == fact["id"] and vector.notes == ()


async def test_a_merged_page_commits_without_embedding(mesh: Mesh) -> None:
    origin = await mesh.open("b", embedder=None)
    await origin.import_facts(notes(50))
    pages = await origin.store.read(delta_log.changes_since, {}, MAX_PAGE_DELTAS)
    embedder = SlowEmbedder()
    node = await mesh.open("a", embedder=embedder)
    assert sum([await apply_page(node, page, origin.node_id) for page in pages]) == 50
    assert embedder.calls == [] and node.embedding.woken
    assert (await node.stats())["embed_pending"] == 50


async def test_serve_embeds_in_the_background_while_writes_and_searches_go_on(
    mesh: Mesh,
) -> None:
    embedder = GatedEmbedder(queries=["piano tuner", "boiler serviced"])
    node = await mesh.open("a", embedder=embedder)
    try:
        async with serving(node, mesh.ports["a"]):
            boiler = await node.remember(("boiler", "serviced_on", "Monday"))
            await wait_until(embedder.entered.is_set, "the background drain to take a batch")
            # The model is busy with that batch: a write still commits, a search still answers.
            piano = await node.remember(("piano tuner", "comes_on", "Friday"))
            found = await node.search("piano tuner", strategy="hybrid")
            assert found.results[0]["id"] == piano["id"]
            assert (await node.stats())["embed_pending"] == 2
            embedder.gate.set()

            async def drained() -> bool:
                return (await node.stats())["embed_pending"] == 0

            await wait_until(drained, "the queue to drain")  # woken by the second write too
            vector = await node.search("boiler serviced", strategy="vector", top_k=1)
            assert vector.results[0]["id"] == boiler["id"]
            assert node.embedding.index is not None and node.embedding.index.loads == 1
    finally:
        embedder.gate.set()


async def test_a_queue_entry_commits_with_its_write_and_rolls_back_with_it(mesh: Mesh) -> None:
    """Crash safety: the entry is in the write's own transaction, never in a later one."""
    node = await mesh.open("a", embedder=SlowEmbedder())

    def write_then_fail(conn: Connection) -> None:
        memories.remember_fact(conn, node.node_id, node.clock.tick, ("s", "p", "o"), now_ms=0)
        assert conn.execute("SELECT count(*) FROM embed_queue").fetchone()[0] == 1
        raise RuntimeError("the process dies before COMMIT")

    with pytest.raises(RuntimeError):
        await node.store.write(write_then_fail)
    assert committed(mesh.home("a"), "SELECT count(*) FROM embed_queue") == 0
    await node.remember(("s", "p", "o"))
    assert committed(mesh.home("a"), "SELECT count(*) FROM embed_queue") == 1


async def test_a_node_reads_its_vectors_once_and_keeps_them_current(mesh: Mesh) -> None:
    node = await mesh.open("a", embedder=SlowEmbedder(delay_s=0))
    await node.import_facts(notes(20))
    await node.embed_queued()
    index = node.embedding.index
    assert index is not None and index.loads == 0  # nothing read before the first search
    first = await node.search("parcel 7 depot", strategy="vector")
    fact = await node.remember(("boiler", "serviced_on", "Monday"))
    await node.embed_queued()  # told to the held copy: no second read
    found = await node.search("boiler serviced Monday", strategy="vector")
    assert first.results and found.results[0]["id"] == fact["id"]
    assert node.embedding.index is index and index.loads == 1


async def test_a_node_without_an_embedder_holds_no_vectors(mesh: Mesh) -> None:
    node = await mesh.open("a")
    assert node.embedder is None and node.embedding.index is None
