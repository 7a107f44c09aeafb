"""The kernel's change notification (node/kernel.py): it tells whoever subscribed that a peer's
rows arrived and which rows a commit erased, so curation keeps its derived files current without
the kernel calling it. A bare kernel (no ``Node`` around it) is opened here on purpose: what
reaches the listeners is the kernel's doing, not curation's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from feral.node.kernel import RowsArrived, RowsErased
from feral.node.node_kernel import NodeKernel
from feral.storage.log import delta_log
from feral.sync.delta import Page

from .support import Mesh


class Heard:
    """Records what the listeners were told, in order, naming the listener."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def arrived(self, name: str) -> RowsArrived:
        async def listener() -> None:
            self.calls.append((name, []))

        return listener

    def erased(self, name: str) -> RowsErased:
        async def listener(ids: list[str]) -> None:
            self.calls.append((name, ids))

        return listener


@pytest.fixture
async def mesh(tmp_path: Path) -> AsyncIterator[Mesh]:
    mesh = Mesh(tmp_path)
    mesh.add("a", "b")
    yield mesh
    await mesh.aclose()


@pytest.fixture
async def kernel(mesh: Mesh) -> AsyncIterator[NodeKernel]:
    """A bare kernel on home ``b``: no ``Node`` around it, so nothing subscribed but the test."""
    kernel = await NodeKernel.open(mesh.home("b"))
    yield kernel
    await kernel.close()


async def receive(kernel: NodeKernel, pages: list[Page]) -> None:
    """Apply each page as a link does: one write, then the kernel's ``remote_applied``."""
    for page in pages:
        await kernel.store.write(
            delta_log.apply_page, page, now_ms=kernel.now_ms(),
            max_skew_ms=kernel.settings.sync.max_clock_skew_ms, checked=True,
        )  # fmt: skip
        await kernel.remote_applied()


async def test_a_local_nuke_names_the_erased_row_to_every_subscriber_in_order(
    kernel: NodeKernel,
) -> None:
    heard = Heard()
    kernel.on_rows_erased(heard.erased("first"))
    kernel.on_rows_erased(heard.erased("second"))
    kept = await kernel.remember(("the plant", "needs", "water"))
    gone = await kernel.remember(("the door code", "is", "behind the clock"))
    assert heard.calls == []  # a write that erased nothing tells no one
    await kernel.nuke(str(gone["id"]))
    assert heard.calls == [("first", [str(gone["id"])]), ("second", [str(gone["id"])])]
    await kernel.set_archived(str(kept["id"]), True)
    assert len(heard.calls) == 2  # archiving erases nothing


async def test_rows_from_a_peer_reach_the_arrival_subscribers_and_a_remote_nuke_names_its_row(
    mesh: Mesh, kernel: NodeKernel
) -> None:
    writer = await mesh.open("a")
    heard = Heard()
    kernel.on_rows_arrived(heard.arrived("arrived"))
    kernel.on_rows_erased(heard.erased("erased"))
    row = await writer.remember(("the spare key", "is", "under the mat"))
    pages: list[Page] = await writer.store.read(delta_log.changes_since, {}, 1000)
    await receive(kernel, pages)
    assert heard.calls == [("arrived", [])] * len(pages)
    assert await kernel.get(str(row["id"]))
    held = await kernel.version_vector()
    await writer.nuke(str(row["id"]))
    await receive(kernel, await writer.store.read(delta_log.changes_since, held, 1000))
    assert heard.calls[-2:] == [("erased", [str(row["id"])]), ("arrived", [])]
