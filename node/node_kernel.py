"""The node's kernel: one device's identity, settings, clock and store, its write path and its
change notification, without the features built on it (the ``Node`` users hold, node/node/, adds
them; the features see this class through node/kernel.py's protocol).

This is the only place that stamps HLCs (DESIGN §3): every local write hands the node's
:meth:`HybridClock.tick` to storage, which calls it inside the write transaction with the
persisted high-water mark, so stamps stay strictly increasing across restarts and across
processes sharing one home, and above the mark kept beside the database (node/clock_mark.py),
so a database restored from an older copy never reuses a stamp.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Concatenate, ParamSpec, Protocol, Self, TypeVar, cast

from feral.node.home.home_paths import DATABASE_FILE
from feral.node.home.identity import Identity, load_or_create_identity
from feral.node.settings.config import Settings, load_settings
from feral.storage.db.connection import Connection
from feral.storage.db.migrations import Migration
from feral.storage.db.rows import EpisodeRow, ExecutionRow, FactRow
from feral.storage.encoders.embedders import load_embedder
from feral.storage.encoders.model_stamps import STAMPS_FILE
from feral.storage.log import delta_log
from feral.storage.log.erase import finish_erasing
from feral.storage.memory import curation, export, graph, memories, memory_model, stats
from feral.storage.memory.memories import Stamp
from feral.storage.store import Store
from feral.storage.vectors.vectors import Embedder
from feral.sync.errors import ConfigError
from feral.sync.hlc import COUNTER_BITS, DEFAULT_MAX_DRIFT_MS, HybridClock
from feral.sync.ids import new_ulid
from feral.sync.schema import Schema
from feral.sync.types import NodeId, PackedHLC, RowId, VersionVector

from .answers import EntityRow, MemoryRow
from .clock_mark import read_mark, write_mark
from .embedding import Embedding
from .kernel import RowsArrived, RowsErased

__all__ = ["CLOCK_OFFSET_ENV", "Link", "NodeKernel", "wall_clock_ms"]

CLOCK_OFFSET_ENV = "FERAL_CLOCK_OFFSET_MS"
P = ParamSpec("P")
T = TypeVar("T")


def wall_clock_ms() -> Callable[[], int]:
    """The system clock in ms, shifted by ``$FERAL_CLOCK_OFFSET_MS`` when set.

    The offset exists so tests can run a real node whose clock is wrong (DESIGN §4's skew
    window is tested with real processes); a user never needs it.
    """
    raw = os.environ.get(CLOCK_OFFSET_ENV, "0")
    try:
        offset = int(raw)
    except ValueError as exc:
        raise ConfigError(f"{CLOCK_OFFSET_ENV} must be an integer, got {raw!r}") from exc
    return lambda: time.time_ns() // 1_000_000 + offset


class Link(Protocol):
    """A live link to a peer that can be told about local commits (see node/links/peer.py)."""

    async def local_changed(self) -> None: ...


class NodeKernel:
    """One device's store, clock and write path. Create with :meth:`open`; always :meth:`close`."""

    def __init__(
        self,
        home: Path,
        identity: Identity,
        settings: Settings,
        store: Store,
        now_ms: Callable[[], int],
        embedder: Embedder | None,
        epoch: str,
    ) -> None:
        self.home = home
        self.epoch = epoch
        self.links: dict[NodeId, Link] = {}
        """Authenticated live links by peer id (filled by the peer layer): the one that pushes."""
        self.standby: dict[NodeId, list[Link]] = {}
        """Older live links with those peers, oldest first, next to push (node/links/peer.py)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self.identity = identity
        self.settings = settings
        self.store = store
        self.now_ms = now_ms
        self.embedder = embedder
        self.embedding = Embedding(store, embedder)
        """The embedding queue, drained off the write path, and the vectors held in memory."""
        # Logical time may run ahead of the wall clock (a row edited after a faster device
        # wrote it, a clock set back), but never less than the default: a small window must
        # not stop local writes after an ordinary step back of the system clock.
        drift = max(DEFAULT_MAX_DRIFT_MS, settings.sync.max_clock_skew_ms)
        # Resume above every stamp ever issued here, even if the database is an older copy.
        self.clock = HybridClock(identity.node_id, now_ms, read_mark(home), max_drift_ms=drift)
        self.stamped_ahead_ms = 0  # how far ahead of the clock the last local stamp was
        self._arrived: list[RowsArrived] = []
        self._erased: list[RowsErased] = []

    @property
    def node_id(self) -> NodeId:
        return self.identity.node_id

    @classmethod
    async def open(
        cls,
        home: Path,
        *,
        now_ms: Callable[[], int] | None = None,
        embedder: Embedder | None = None,
        check: bool = False,
        schema: Schema | None = None,
        migrations: tuple[Migration, ...] = (),
    ) -> Self:
        """Open the node in ``home``, creating its key, settings and database on first use.

        ``check`` runs SQLite's integrity check first (``feral serve`` does; short commands
        skip it, since it reads the whole file). ``embedder`` overrides the ``memory.embedder``
        setting (tests); with neither, the model shipped inside feral embeds. ``schema`` and
        ``migrations`` make it a node of a newer replicated schema (``Store.open``).

        Raises:
            ModelUnavailable: the configured model is missing or damaged.
        """
        identity = load_or_create_identity(home)
        settings = load_settings(home)
        if embedder is None:
            embedder = load_embedder(settings.memory.embedder, home / STAMPS_FILE)
        database = home / DATABASE_FILE
        store = await Store.open(database, check=check, schema=schema, migrations=migrations)
        try:
            epoch = await store.read(stats.log_epoch)
            node = cls(home, identity, settings, store, now_ms or wall_clock_ms(), embedder, epoch)
            await node.embedding.prepare()
        except BaseException:
            await store.close()
            raise
        return node

    async def close(self) -> None:
        await self.embedding.stop()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.store.close()

    def is_paired(self, node_id: NodeId) -> bool:
        """Whether ``node_id`` is one of this node's paired peers."""
        return any(peer.node_id == node_id for peer in self.settings.sync.peers)

    def notify_changed(self, exclude: object = None) -> None:
        """Tell every live link (but ``exclude``) that something committed here (live sync)."""
        for link in list(self.links.values()):
            if link is not exclude:
                self.spawn(link.local_changed())

    def on_rows_arrived(self, listener: RowsArrived) -> None:
        """Call ``listener`` after every page a peer's link applies here, in subscription order."""
        self._arrived.append(listener)

    def on_rows_erased(self, listener: RowsErased) -> None:
        """Call ``listener`` with the ids erased after every commit that erased rows."""
        self._erased.append(listener)

    def spawn(self, work: Awaitable[None]) -> None:
        """Run ``work`` as a task that :meth:`close` waits for."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- local writes --------------------------------------------------------------------------

    async def remember(
        self, triple: tuple[str, str, str], *, confidence: float = 1.0, scope: str | None = None
    ) -> FactRow:
        """Store a fact; the same fact remembered twice (anywhere) is one row. ``scope`` (checked
        by the caller: node/settings/scopes.py) puts it in that scope; ``None`` leaves its scope as
        is. A fact holding what looks like a secret is refused (SecretRefused,
        node/secrets/scan.py)."""
        from feral.node.secrets.scan import refuse_triple  # its patterns: on a write only

        refuse_triple(triple)
        row = await self.write(
            curation.remember_scoped,
            triple,
            now_ms=self.now_ms(),
            confidence=confidence,
            scope=scope,
        )
        await self.after_write()
        return row

    async def add_episode(
        self, session_id: str, summary: str, entities: Iterable[str] = ()
    ) -> EpisodeRow:
        """Store an episode under a new ULID (SecretRefused if it holds a secret)."""
        from feral.node.secrets.scan import refuse_secrets  # its patterns: on a write only

        entities = list(entities)
        refuse_secrets([summary, *entities])
        row = await self.write(
            memories.add_episode,
            self._new_id(),
            session_id=session_id,
            summary=summary,
            entities=entities,
            now_ms=self.now_ms(),
        )
        await self.after_write()
        return row

    async def log_execution(
        self,
        session_id: str,
        tool: str,
        *,
        args: object,
        result: object,
        latency_ms: int,
        success: bool,
    ) -> ExecutionRow:
        """Append a tool call to the execution log (SecretRefused if it holds a secret)."""
        from feral.node.secrets.scan import refuse_secrets  # its patterns: on a write only

        fields = (args, result, latency_ms, success)
        refuse_secrets([session_id, tool, *(str(value) for value in fields)])
        row = await self.write(
            memories.log_execution,
            self._new_id(),
            session_id=session_id,
            tool=tool,
            args=args,
            result=result,
            latency_ms=latency_ms,
            success=success,
            now_ms=self.now_ms(),
        )
        self.notify_changed()
        return row

    async def set_archived(self, row_id: str, archived: bool) -> FactRow | EpisodeRow:
        """``forget`` (archive) or ``restore`` a memory; raises NotFoundError for unknown ids."""
        row = await self.write(memories.set_archived, row_id, archived)
        self.notify_changed()
        return cast(FactRow | EpisodeRow, row)  # the execution log is insert-only

    async def nuke(self, row_id: str) -> MemoryRow:
        """Hard-delete a memory, leaving a replicated tombstone."""
        row = await self.write(memories.nuke, row_id)
        await self.after_write()
        return cast(MemoryRow, row)

    async def add_entity(self, entity_type: str, name: str) -> EntityRow:
        """Name an entity of the graph (node/recall/graph.py checks the type and name; SecretRefused
        if the name holds a secret)."""
        from feral.node.secrets.scan import refuse_secrets  # its patterns: on a write only

        refuse_secrets([entity_type, name])
        row = await self.write(memory_model.add_entity, entity_type, name, now_ms=self.now_ms())
        self.notify_changed()
        return cast(EntityRow, row)

    async def relate(
        self, source: tuple[str, str], relation: str, target: tuple[str, str]
    ) -> FactRow:
        """Name two entities and remember the fact relating them, in one write (SecretRefused
        if it holds a secret: ``person:Sam wifi_password thing:...``)."""
        from feral.node.secrets.scan import refuse_triple  # its patterns: on a write only

        refuse_triple((source[1], relation, target[1]))
        row = await self.write(graph.relate, source, relation, target, now_ms=self.now_ms())
        await self.after_write()
        return row

    async def commit(
        self,
        fn: Callable[Concatenate[Connection, NodeId, Stamp, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """Run the local write ``fn(conn, node_id, stamp, ...)`` and what follows a commit: the
        way other modules write (node/curation/actions.py)."""
        result = await self.write(fn, *args, **kwargs)
        await self.after_write()
        return result

    async def write(
        self,
        fn: Callable[Concatenate[Connection, NodeId, Stamp, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """Run the local write ``fn(conn, node_id, stamp, ...)`` in one transaction."""
        return await self.store.write(self._stamped, fn, *args, **kwargs)

    def _stamped(
        self,
        conn: Connection,
        fn: Callable[Concatenate[Connection, NodeId, Stamp, P], T],
        /,
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """Inside the transaction: the write, then the clock mark if it issued a stamp. The
        clock resumes from the mark, which ``feral sync clock-reset`` may have lowered."""
        before = self.clock.last = PackedHLC(read_mark(self.home))
        result = fn(conn, self.node_id, self.clock.tick, *args, **kwargs)
        if self.clock.last != before:
            write_mark(self.home, self.clock.last)
            self.stamped_ahead_ms = (self.clock.last >> COUNTER_BITS) - self.now_ms()
        return result

    def _new_id(self) -> RowId:
        return new_ulid(self.now_ms(), secrets.token_bytes(10))

    async def after_write(self) -> None:
        """After a local write: wake the embedding queue, erase, then live links (DESIGN §5)."""
        self.embedding.wake()
        await self._finish_erasing()
        self.notify_changed()

    async def _finish_erasing(self) -> None:
        """After a commit that erased rows (a nuke, here or from a peer: storage/log/erase.py):
        empty the WAL, which still holds the pages as they were, then tell the subscribers
        which rows went (curation recompiles what showed them: node/curation/upkeep.py)."""
        erased = await self.store.read(finish_erasing)
        if erased:
            for listener in self._erased:
                await listener(erased)

    async def embed_queued(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every queued row now (no-op with no model); ``progress`` gets ``(done, total)``.
        Returns how many rows got their vector; if interrupted, the rest stays queued."""
        return await self.embedding.drain(progress)

    async def reembed(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Drop every vector and embed every row again (:meth:`Embedding.reembed`)."""
        return await self.embedding.reembed(progress)

    # -- reads ---------------------------------------------------------------------------------

    async def get(self, row_id: str) -> MemoryRow:
        _, row = await self.store.read(memories.find_row, row_id)
        return cast(MemoryRow, row)

    async def episodes(self, limit: int = 20) -> list[EpisodeRow]:
        return await self.store.read(memories.list_episodes, limit)

    async def export_lines(self) -> list[str]:
        return await self.store.read(lambda conn: list(export.export_lines(conn)))

    async def state_digest(self) -> str:
        return await self.store.read(export.state_digest)

    # -- replication (the peer layer drives these) ---------------------------------------------

    async def version_vector(self) -> VersionVector:
        return await self.store.read(delta_log.version_vector)

    async def remote_applied(self, exclude: object = None) -> None:
        """A peer's page added rows here: wake the embedding queue, erase, tell the subscribers
        (curation records the conflicts it made), then the other links."""
        self.embedding.wake()
        await self._finish_erasing()
        for listener in self._arrived:
            await listener()
        self.notify_changed(exclude=exclude)
