"""``from feral import Memory``: the memory for scripts and agent frameworks, without asyncio.

:class:`Memory` is a synchronous facade over the async :class:`~feral.node.node.Node`. The node
runs on an event loop of its own, in a private daemon thread started when the memory opens;
each call hands its coroutine to that loop and waits for the answer. Chosen over
``asyncio.run`` per call because:

- it works where an event loop is already running in the caller's thread (a notebook, an async
  agent framework), where ``asyncio.run`` refuses to start;
- the node stays open between calls (one database connection, the model loaded once), where a
  loop per call would have to open and close it each time, since its connection and tasks
  belong to the loop that made them.

Beside the operations on memories here, node/library/assistant.py gives the assistant's:
the digest, the execution log, working-memory sessions (whose buffers live in this
``Memory``, compacted into episodes as ingest does, and flushed when it closes), boost and link.
Answers are the shapes of the HTTP API and of the CLI's ``--json``. Errors are the
:class:`~feral.sync.errors.FeralError` kinds (``InvalidInput``, ``NotFoundError``,
``SecretRefused``...), raised in the caller's thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar, Unpack

from feral.node.answers import (
    AbsorbedAnswer,
    EpisodeRow,
    FactRow,
    Followed,
    ListedMemory,
    SearchAnswer,
)
from feral.node.curation import actions as curation
from feral.node.curation.memory_graph import FOLLOW_MODES, Follow, follow as read_followed
from feral.node.home.identity import KEY_FILENAME
from feral.node.node import Node, default_home
from feral.node.recall.search import SearchOptions, SearchRequest
from feral.node.settings.limits import MAX_EPISODES
from feral.node.settings.scopes import check_scope
from feral.node.settings.validation import Invalid, convert
from feral.sync.errors import FeralError, InvalidInput, NotFoundError

from .assistant import AssistantMethods

__all__ = ["Memory", "require_home"]

T = TypeVar("T")


def require_home(home: Path) -> None:
    """Refuse a home that holds no node, so a mistyped path never makes a fresh identity.

    Raises:
        NotFoundError: no key file in ``home``.
    """
    if not (home / KEY_FILENAME).is_file():
        raise NotFoundError(f"no feral home at {home}; run `feral init`")


class Memory(AssistantMethods):
    """One home's memory, opened until :meth:`close` (or the end of a ``with`` block).

    ``home`` defaults to ``$FERAL_HOME`` or ``~/.feral``. A home that does not exist is an
    error unless ``create`` is true.
    """

    def __init__(self, home: str | Path | None = None, *, create: bool = False) -> None:
        self.home = Path(home) if home is not None else default_home()
        if not create:
            require_home(self.home)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="feral-memory")
        self._thread.daemon = True
        self._thread.start()
        try:
            self._node: Node | None = self._call(Node.open(self.home))
        except BaseException:
            self._stop_loop()
            raise

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Compact what is left in the sessions into episodes, close the node (queued rows stay
        queued for the next open) and end the thread."""
        node, self._node = self._node, None
        if node is not None:
            try:
                self._call(self._close(node))
            finally:
                self._stop_loop()

    async def _close(self, node: Node) -> None:
        try:
            if self._sessions is not None:
                await self._sessions.close()
        finally:
            await node.close()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def _call(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the node's loop and wait for its answer (its error raised here)."""
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    @property
    def node(self) -> Node:
        """The open node (FeralError once closed)."""
        if self._node is None:
            raise FeralError("this Memory is closed")
        return self._node

    def remember(
        self,
        text: str | None = None,
        *,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        scope: str | None = None,
        keep_both: bool = False,
    ) -> AbsorbedAnswer:
        """Remember a sentence, or a triple, through the absorb pipeline; the answer says how it
        was classified (``classification``), names any row merged into or archived
        (``merged_into``, ``archived_rows``) and holds the stored row's fields; ``keep_both``
        writes it beside such a row instead."""
        parts = (subject, predicate, object)
        triple = None
        if any(part is not None for part in parts):
            if text is not None or not all(isinstance(part, str) for part in parts):
                raise InvalidInput("give a text, or subject, predicate and object together")
            triple = (str(subject), str(predicate), str(object))
        if scope is not None:
            check_scope(scope)
        return self._call(self.node.absorb(text, triple, scope, keep_both=keep_both)).as_dict()

    def search(self, query: str, **options: Unpack[SearchOptions]) -> SearchAnswer:
        """Search facts and episodes: ``{"results": [...], "total", "query_time_ms"}``.
        ``options`` are the API's: ``top_k``, ``strategy``, ``alpha``, ``mmr``, ``mmr_lambda``,
        ``min_score``, ``scope``; one left out takes the node's settings."""
        try:
            request = convert({"query": query, **options}, SearchRequest, top="the arguments")
        except Invalid as exc:
            raise InvalidInput(str(exc)) from None
        fields = {name: getattr(request, name) for name in request.__struct_fields__}
        return self._call(self.node.search(**fields)).as_dict()

    def get(self, memory_id: str, *, follow: Follow = "none") -> Followed:
        """One memory by id: ``{"record", ...}``; ``follow`` ``edges`` adds its links,
        ``full_history`` every version it superseded (NotFoundError for an unknown id)."""
        if follow not in FOLLOW_MODES:
            raise InvalidInput(f"follow must be one of {', '.join(FOLLOW_MODES)}")
        return self._call(read_followed(self.node, memory_id, follow))

    def list(
        self,
        *,
        tier: str | None = None,
        scope: str | None = None,
        status: str = "active",
        limit: int = 50,
    ) -> list[ListedMemory]:
        """The newest memories (``tier`` semantic for facts, episodic for episodes; ``status``
        active, archived, superseded or all)."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_EPISODES:
            raise InvalidInput(f"limit must be a whole number from 1 to {MAX_EPISODES}")
        return self._call(
            curation.list_memories(self.node, tier=tier, scope=scope, status=status, limit=limit)
        )

    def forget(self, memory_id: str) -> FactRow | EpisodeRow:
        """Archive a memory: it leaves search and the active list; :meth:`restore` undoes it."""
        return self._call(self.node.set_archived(memory_id, True))

    def restore(self, memory_id: str) -> FactRow | EpisodeRow:
        """Bring an archived memory back."""
        return self._call(self.node.set_archived(memory_id, False))
