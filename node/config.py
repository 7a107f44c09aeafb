"""``<home>/settings.json``: the node's settings, in FERAL's shape (DESIGN §6).

The file is one JSON object: ``name`` plus the sections ``memory``, ``sync`` (whose ``peers`` is
a list of ``{"node_id", "url"}``) and ``search``, with the keys of the dataclasses below. Every
key is optional and takes its default when missing; a missing file means all defaults.

Validation is strict, and deliberately so: an unknown section or key is refused with a
:class:`~feral.sync.errors.ConfigError` naming it, never ignored. A misspelt ``max_clock_skew``
would otherwise leave the default in force without a word, which is the failure a settings file must
not have. The cost: other tools cannot park their own sections here (they keep their own files),
and an older feral refuses a file written by a newer one that added keys, naming the key, which
is the honest outcome of a downgrade.

Every error message starts with the file and names the key path, e.g.
``settings.json: sync.max_clock_skew_ms must be a positive integer, got "abc"``. Booleans are not
accepted as numbers, numbers must be finite, and duplicate JSON keys are refused rather than
letting the last one silently win. :func:`save_settings` validates before writing, so feral never
writes a file it would refuse to read.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn, TypeVar
from urllib.parse import urlsplit

from feral.storage.static_model import DEFAULT_EMBEDDER, EMBEDDER_CHOICES
from feral.sync.delta import check_node_id
from feral.sync.errors import ConfigError, NotFoundError, ProtocolError
from feral.sync.types import NodeId

from .identity import ensure_home, write_private_file

__all__ = [
    "CONFLICT_RESOLUTIONS",
    "COMPACTION_STRATEGIES",
    "LLMSettings",
    "DEFAULT_NAME",
    "MAX_CLOCK_SKEW_MS",
    "SEARCH_STRATEGIES",
    "SETTINGS_FILENAME",
    "MemorySettings",
    "PeerSettings",
    "SearchSettings",
    "Settings",
    "SyncSettings",
    "load_settings",
    "save_settings",
    "settings_from_dict",
    "settings_to_dict",
    "with_peer",
    "without_peer",
]

SETTINGS_FILENAME = "settings.json"
DEFAULT_NAME = "feral-node"
"""The default node name: fixed, so no host name leaks into the file or to peers."""

MAX_NAME_LENGTH = 64
MAX_CLOCK_SKEW_MS = 3_600_000
"""The hard cap on ``sync.max_clock_skew_ms`` (one hour; TEST-CATALOG, "Clock")."""

MAX_SETTINGS_BYTES = 1024 * 1024
SEARCH_STRATEGIES = ("fts", "vector", "hybrid")
CONFLICT_RESOLUTIONS = ("last_write_wins",)
COMPACTION_STRATEGIES = ("extractive", "llm")
"""``extractive`` needs no model, so compaction works offline; ``llm`` needs ``memory.llm`` and
falls back to ``extractive`` whenever the endpoint fails (node/summarise.py)."""


@dataclass(frozen=True)
class LLMSettings:
    """An OpenAI-compatible chat endpoint for summaries (``memory.llm``); never required."""

    base_url: str
    """Up to the API version, e.g. ``http://127.0.0.1:11434/v1``; ``/chat/completions`` is added."""
    model: str
    """The model name sent with each request."""
    api_key_env: str | None = None
    """The environment variable holding the API key (the key itself never goes in the file)."""


@dataclass(frozen=True)
class MemorySettings:
    """Working-memory limits (DESIGN §2)."""

    working_memory_budget: int = 8000
    """The token budget of one session's working memory."""
    compaction_trigger: float = 0.85
    """The fraction of the budget at which the oldest messages are compacted into an episode."""
    compaction_strategy: str = "extractive"
    """How an episode's summary is made; see :data:`COMPACTION_STRATEGIES`."""
    llm: LLMSettings | None = None
    """The endpoint the ``llm`` strategy uses (``null``: none)."""
    embedder: str = DEFAULT_EMBEDDER
    """The model that embeds episodes and facts (the one shipped inside feral by default), or
    ``"none"`` to turn vector search off; see
    :data:`feral.storage.static_model.EMBEDDER_CHOICES`."""


@dataclass(frozen=True)
class PeerSettings:
    """One paired device."""

    node_id: NodeId
    """The peer's id: the fingerprint of the key it must prove it holds."""
    url: str | None = None
    """Where to dial it (``ws://`` or ``wss://``), or ``None`` for a peer that only dials in."""


@dataclass(frozen=True)
class SyncSettings:
    """Peer-to-peer replication."""

    enabled: bool = True
    peers: tuple[PeerSettings, ...] = ()
    """Paired devices, in the order the user added them; node ids and urls are unique."""
    conflict_resolution: str = "last_write_wins"
    """Only row-level LWW exists (DESIGN §4); the key is kept for FERAL's shape."""
    max_clock_skew_ms: int = 300_000
    """How far ahead of our wall clock a peer's stamp may be before it is refused."""


@dataclass(frozen=True)
class SearchSettings:
    """Defaults for ``feral memory search`` and ``POST /api/memory/search``."""

    top_k: int = 10
    strategy: str = "hybrid"
    alpha: float = 0.5
    """The vector weight in hybrid scoring: ``alpha*vector + (1-alpha)*fts``."""
    mmr: bool = False
    mmr_lambda: float = 0.7
    """Relevance weight in the MMR rerank: ``lambda*rel - (1-lambda)*max_sim_to_selected``."""


@dataclass(frozen=True)
class Settings:
    """Everything in ``settings.json``."""

    name: str = DEFAULT_NAME
    memory: MemorySettings = field(default_factory=MemorySettings)
    sync: SyncSettings = field(default_factory=SyncSettings)
    search: SearchSettings = field(default_factory=SearchSettings)


def load_settings(home: Path) -> Settings:
    """Read ``<home>/settings.json``; a missing file (or home) means the defaults.

    Raises:
        ConfigError: unreadable file, invalid JSON (with line and column) or an invalid value.
    """
    path = home / SETTINGS_FILENAME
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_SETTINGS_BYTES + 1)
    except FileNotFoundError:
        return Settings()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if len(raw) > MAX_SETTINGS_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_SETTINGS_BYTES} bytes; not a settings file")
    return settings_from_dict(_parse_json(path, raw), source=str(path))


def save_settings(home: Path, settings: Settings) -> None:
    """Write ``settings`` to ``<home>/settings.json`` atomically, mode 0600.

    The JSON is indented with sorted keys and ends with a newline, so the file diffs cleanly
    and reads well by hand. The home is created (0700) if missing.

    Raises:
        ConfigError: ``settings`` holds an invalid value (nothing is written), or the write fails.
    """
    path = home / SETTINGS_FILENAME
    data = settings_to_dict(settings)
    settings_from_dict(data, source=str(path))
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    ensure_home(home)
    write_private_file(path, text.encode("utf-8"))


def settings_to_dict(settings: Settings) -> dict[str, Any]:
    """The JSON-ready form of ``settings`` (every key present, peers as a list)."""
    data = asdict(settings)
    data["sync"]["peers"] = list(data["sync"]["peers"])
    return data


def settings_from_dict(data: object, *, source: str = SETTINGS_FILENAME) -> Settings:
    """Validate decoded JSON and build :class:`Settings`; missing keys take their defaults.

    Args:
        data: the decoded JSON document.
        source: what to call the document in error messages (normally the file's path).

    Raises:
        ConfigError: ``"<source>: <key path> <what is wrong>, got <value>"``.
    """
    top = _Where(source, "")
    raw = top.object(data, ("name", "memory", "sync", "search"))
    changes: dict[str, Any] = {}
    if "name" in raw:
        changes["name"] = _name(top.at("name"), raw["name"])
    if "memory" in raw:
        changes["memory"] = _section(top.at("memory"), raw["memory"], MemorySettings(), _MEMORY)
        if changes["memory"].compaction_strategy == "llm" and changes["memory"].llm is None:
            top.at("memory").at("llm").fail('must be set when compaction_strategy is "llm"', None)
    if "sync" in raw:
        changes["sync"] = _section(top.at("sync"), raw["sync"], SyncSettings(), _SYNC)
    if "search" in raw:
        changes["search"] = _section(top.at("search"), raw["search"], SearchSettings(), _SEARCH)
    return replace(Settings(), **changes)


def with_peer(settings: Settings, peer: PeerSettings) -> Settings:
    """Pair ``peer``: replace the peer with its node id (keeping its place) or append it.

    Raises:
        ConfigError: a malformed node id or url, or a url that belongs to another peer.
    """
    where = _Where("invalid peer", "")
    _node_id(where.at("node_id"), peer.node_id)
    _url(where.at("url"), peer.url)
    others = [p for p in settings.sync.peers if p.node_id != peer.node_id]
    taken = next((p for p in others if peer.url is not None and p.url == peer.url), None)
    if taken is not None:
        raise ConfigError(f"peer url {peer.url} already belongs to peer {taken.node_id}")
    if len(others) == len(settings.sync.peers):
        peers = (*settings.sync.peers, peer)
    else:
        peers = tuple(peer if p.node_id == peer.node_id else p for p in settings.sync.peers)
    return replace(settings, sync=replace(settings.sync, peers=peers))


def without_peer(settings: Settings, id_or_url: str) -> Settings:
    """Unpair the peer whose node id or url is ``id_or_url``.

    Raises:
        NotFoundError: no paired peer has that node id or url.
    """
    kept = tuple(p for p in settings.sync.peers if id_or_url not in (p.node_id, p.url))
    if len(kept) == len(settings.sync.peers):
        raise NotFoundError(f"no paired peer has the node id or url {id_or_url!r}")
    return replace(settings, sync=replace(settings.sync, peers=kept))


@dataclass(frozen=True)
class _Where:
    """A key path inside one document, so every error can say where it is."""

    source: str
    path: str

    def at(self, key: str) -> _Where:
        return _Where(self.source, f"{self.path}.{key}" if self.path else key)

    def item(self, index: int) -> _Where:
        return _Where(self.source, f"{self.path}[{index}]")

    def fail(self, requirement: str, value: object) -> NoReturn:
        where = self.path or "the top level"
        raise ConfigError(f"{self.source}: {where} {requirement}, got {_show(value)}")

    def object(self, value: object, known: tuple[str, ...]) -> dict[str, object]:
        """``value`` as a JSON object holding only ``known`` keys."""
        if not isinstance(value, dict):
            self.fail("must be a JSON object", value)
        unknown = [str(key) for key in value if key not in known]
        if unknown:
            paths = ", ".join(self.at(key).path for key in unknown)
            verb = "is not a known key" if len(unknown) == 1 else "are not known keys"
            within = self.path or "the top level"
            raise ConfigError(f"{self.source}: {paths} {verb}; {within} takes {', '.join(known)}")
        return value


_S = TypeVar("_S", MemorySettings, SyncSettings, SearchSettings)


def _section(where: _Where, value: object, default: _S, checks: dict[str, _Check]) -> _S:
    """``default`` with the keys present in ``value`` replaced, each after its check."""
    raw = where.object(value, tuple(checks))
    return replace(default, **{key: checks[key](where.at(key), raw[key]) for key in raw})


def _peers(where: _Where, value: object) -> tuple[PeerSettings, ...]:
    """The peer list; node ids and urls must be unique so a peer is named by either."""
    if not isinstance(value, list | tuple):
        where.fail("must be a list of peers", value)
    peers: list[PeerSettings] = []
    for index, item in enumerate(value):
        at = where.item(index)
        raw = at.object(item, ("node_id", "url"))
        if "node_id" not in raw:
            raise ConfigError(f"{at.source}: {at.at('node_id').path} is required")
        peer = PeerSettings(
            node_id=_node_id(at.at("node_id"), raw["node_id"]),
            url=_url(at.at("url"), raw.get("url")),
        )
        for earlier, other in enumerate(peers):
            if peer.node_id == other.node_id:
                at.at("node_id").fail(f"repeats {where.item(earlier).path}", peer.node_id)
            if peer.url is not None and peer.url == other.url:
                at.at("url").fail(f"repeats {where.item(earlier).path}", peer.url)
        peers.append(peer)
    return tuple(peers)


def _node_id(where: _Where, value: object) -> NodeId:
    try:
        return check_node_id(value)
    except ProtocolError:
        where.fail("must be a node id: 32 characters of lower-case base32 (a-z, 2-7)", value)


def _url(where: _Where, value: object) -> str | None:
    """``None`` (the peer dials us) or a ws:// or wss:// URL with a host and a valid port."""
    if value is None:
        return None
    requirement = "must be null or a ws:// or wss:// URL with a host"
    if not isinstance(value, str) or any(ch.isspace() for ch in value):
        where.fail(requirement, value)
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 -- raises ValueError for a port out of range
    except ValueError:
        where.fail(requirement, value)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        where.fail(requirement, value)
    return value


def _name(where: _Where, value: object) -> str:
    """A label for status output and peers: printable, so it cannot forge lines in a terminal."""
    if not isinstance(value, str) or not value.strip() or not value.isprintable():
        where.fail("must be a non-empty string of printable characters", value)
    if len(value) > MAX_NAME_LENGTH:
        where.fail(f"must be at most {MAX_NAME_LENGTH} characters", value)
    return value


def _positive_int(where: _Where, value: object, at_most: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        where.fail("must be a positive integer", value)
    if at_most is not None and value > at_most:
        where.fail(f"must be at most {at_most}", value)
    return value


def _fraction(where: _Where, value: object, *, zero_allowed: bool = True) -> float:
    """A number in [0, 1], or in (0, 1] when ``zero_allowed`` is false; ints count, bools do not."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        where.fail("must be a number", value)
    if isinstance(value, float) and not math.isfinite(value):
        where.fail("must be a finite number", value)
    if zero_allowed and not 0 <= value <= 1:
        where.fail("must be a number from 0 to 1", value)
    if not zero_allowed and not 0 < value <= 1:
        where.fail("must be a number greater than 0 and at most 1", value)
    return float(value)


def _bool(where: _Where, value: object) -> bool:
    if not isinstance(value, bool):
        where.fail("must be true or false", value)
    return value


def _choice(where: _Where, value: object, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        where.fail(f"must be one of {', '.join(json.dumps(a) for a in allowed)}", value)
    return value


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _llm(where: _Where, value: object) -> LLMSettings | None:
    """``null`` or ``{"base_url", "model", "api_key_env"}`` (``api_key_env`` optional)."""
    if value is None:
        return None
    raw = where.object(value, ("base_url", "model", "api_key_env"))
    for key in ("base_url", "model"):
        if key not in raw:
            raise ConfigError(f"{where.source}: {where.at(key).path} is required")
    base_url = raw["base_url"]
    if not isinstance(base_url, str) or not _http_url(base_url):
        where.at("base_url").fail("must be an http:// or https:// URL with a host", base_url)
    model = raw["model"]
    if not isinstance(model, str) or not model.strip() or not model.isprintable():
        where.at("model").fail("must be a non-empty string of printable characters", model)
    key_env = raw.get("api_key_env")
    if key_env is not None and (not isinstance(key_env, str) or not _ENV_NAME.fullmatch(key_env)):
        where.at("api_key_env").fail("must be null or an environment variable name", key_env)
    return LLMSettings(base_url, model, key_env)


def _http_url(value: str) -> bool:
    if any(ch.isspace() for ch in value):
        return False
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 -- raises ValueError for a port out of range
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


_Check = Callable[["_Where", object], Any]
"""Validates one key's value (the ``_Where`` names it in errors) and returns it as stored."""

_MEMORY: dict[str, _Check] = {
    "working_memory_budget": _positive_int,
    "compaction_trigger": lambda w, v: _fraction(w, v, zero_allowed=False),
    "compaction_strategy": lambda w, v: _choice(w, v, COMPACTION_STRATEGIES),
    "llm": _llm,
    "embedder": lambda w, v: _choice(w, v, EMBEDDER_CHOICES),
}
_SYNC: dict[str, _Check] = {
    "enabled": _bool,
    "peers": _peers,
    "conflict_resolution": lambda w, v: _choice(w, v, CONFLICT_RESOLUTIONS),
    "max_clock_skew_ms": lambda w, v: _positive_int(w, v, at_most=MAX_CLOCK_SKEW_MS),
}
_SEARCH: dict[str, _Check] = {
    "top_k": _positive_int,
    "strategy": lambda w, v: _choice(w, v, SEARCH_STRATEGIES),
    "alpha": _fraction,
    "mmr": _bool,
    "mmr_lambda": _fraction,
}


def _parse_json(path: Path, raw: bytes) -> object:
    """Decode the file, naming the line and column of a syntax error and refusing duplicate keys."""
    try:
        text = raw.decode("utf-8-sig")  # tolerate the BOM some editors write
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
    try:
        return json.loads(text, object_pairs_hook=lambda pairs: _unique(path, pairs))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc
    except RecursionError as exc:
        raise ConfigError(f"{path}: JSON nested too deeply to be settings") from exc


def _unique(path: Path, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ConfigError(f"{path}: the key {json.dumps(key)} appears twice in one object")
        result[key] = value
    return result


def _show(value: object) -> str:
    """A short JSON rendering of a bad value for an error message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
