"""What a feature of the node may use of it: the :class:`Kernel` protocol.

The features (node/absorb/, node/recall/, node/curation/, node/assistant/) are handed the node
they work on, but they are written against this protocol, not against the class: the kernel
(node/node_kernel.py) never imports them, and the ``Node`` users hold (node/node/) is the one
place that puts the two together. A feature sees the node's place, settings, store, clock, the
write path and its change notification, and the few plain writes every caller shares.

Change notification: besides telling its live links, the kernel calls back whoever subscribed
when rows arrive from a peer (:meth:`Kernel.on_rows_arrived`) and when a commit erased rows
(:meth:`Kernel.on_rows_erased`): curation keeps its derived state (conflicts, wiki pages,
prompt files) current that way, without the kernel knowing it exists.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from feral.node.settings.config import Settings
from feral.storage.db.connection import Connection
from feral.storage.db.rows import EpisodeRow, ExecutionRow, FactRow
from feral.storage.memory.memories import Stamp
from feral.storage.store import Store
from feral.storage.vectors.vectors import Embedder
from feral.sync.types import NodeId

from .answers import EntityRow
from .embedding import Embedding

__all__ = ["Kernel", "RowsArrived", "RowsErased"]

P = ParamSpec("P")
T = TypeVar("T")

RowsArrived = Callable[[], Awaitable[None]]
"""Called after a peer's page added rows here, before the other links are told."""
RowsErased = Callable[[list[str]], Awaitable[None]]
"""Called with the ids of the rows a commit erased (a nuke, here or from a peer)."""


class Kernel(Protocol):
    """The node as its features see it (node/node_kernel.py's ``NodeKernel`` is one)."""

    home: Path
    settings: Settings
    store: Store
    now_ms: Callable[[], int]
    embedder: Embedder | None
    embedding: Embedding

    @property
    def node_id(self) -> NodeId: ...

    async def commit(
        self,
        fn: Callable[Concatenate[Connection, NodeId, Stamp, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """Run the local write ``fn(conn, node_id, stamp, ...)``, then what follows a commit."""
        ...

    async def write(
        self,
        fn: Callable[Concatenate[Connection, NodeId, Stamp, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """Run the local write in one transaction, leaving what follows a commit to the caller
        (a bulk write runs :meth:`after_write` once its transaction is done)."""
        ...

    async def after_write(self) -> None:
        """After a local write: the embedding queue, erasing, the live links."""
        ...

    def notify_changed(self, exclude: object = None) -> None:
        """Tell the live links that something committed here."""
        ...

    def on_rows_arrived(self, listener: RowsArrived) -> None:
        """Call ``listener`` whenever a peer's page added rows here."""
        ...

    def on_rows_erased(self, listener: RowsErased) -> None:
        """Call ``listener`` with the erased ids whenever a commit erased rows."""
        ...

    async def add_episode(
        self, session_id: str, summary: str, entities: Iterable[str] = ()
    ) -> EpisodeRow: ...

    async def log_execution(
        self,
        session_id: str,
        tool: str,
        *,
        args: object,
        result: object,
        latency_ms: int,
        success: bool,
    ) -> ExecutionRow: ...

    async def add_entity(self, entity_type: str, name: str) -> EntityRow: ...

    async def relate(
        self, source: tuple[str, str], relation: str, target: tuple[str, str]
    ) -> FactRow: ...
