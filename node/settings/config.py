"""``<home>/settings.json``: the node's settings, in FERAL's shape (DESIGN §6).

The file is one JSON object: ``name`` plus the sections ``memory``, ``sync`` (whose ``peers`` is
a list of ``{"node_id", "url"}``), ``search`` and ``cli``, with the keys of the dataclasses
below. Every key is optional and takes its default when missing; a missing file means all
defaults.

The dataclasses are the one declaration of the file: msgspec checks a document against them
(node/settings/validation.py), their limits come from node/settings/limits.py (shared with the HTTP
API and the CLI) and their file-only value types from node/settings/file_values.py, and what the
types cannot say is a ``check`` in their ``Meta`` or, across keys, in :func:`settings_from_dict`.

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
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from feral.node.home.home_paths import SETTINGS_FILENAME
from feral.node.home.identity import ensure_home, write_private_file
from feral.storage.encoders.embedders import DEFAULT_EMBEDDER
from feral.sync.errors import ConfigError, HomeFileError, NotFoundError

from .bounds import (
    DEFAULT_ALPHA,
    DEFAULT_MIN_SCORE,
    DEFAULT_MMR,
    DEFAULT_MMR_LAMBDA,
    DEFAULT_STRATEGY,
)
from .file_values import (
    COMPACTION_STRATEGIES,
    CONFLICT_RESOLUTIONS,
    MAX_CLOCK_SKEW_MS,
    ClassifierName,
    CompactionStrategy,
    ConflictResolution,
    EmbedderName,
    EnvName,
    HttpUrl,
    Label,
    Name,
    PeerId,
    PeerUrl,
    ResidentIdle,
    RetentionDays,
    SkewMs,
    SnapshotAbove,
    Trigger,
)
from .limits import (
    DEFAULT_TOP_K,
    SEARCH_STRATEGIES,
    Fraction,
    LinkCount,
    LinkSeconds,
    MinScore,
    PositiveInt,
    StrategyName,
    TopK,
)
from .validation import Invalid, JsonRefused, convert, key_path, parse_json

__all__ = [
    "CONFLICT_RESOLUTIONS",
    "COMPACTION_STRATEGIES",
    "CliSettings",
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

DEFAULT_NAME = "feral-node"
"""The default node name: fixed, so no host name leaks into the file or to peers."""

MAX_SETTINGS_BYTES = 1024 * 1024


@dataclass(frozen=True)
class LLMSettings:
    """An OpenAI-compatible chat endpoint for summaries (``memory.llm``); never required."""

    base_url: HttpUrl
    """Up to the API version, e.g. ``http://127.0.0.1:11434/v1``; ``/chat/completions`` is added."""
    model: Label
    """The model name sent with each request."""
    api_key_env: EnvName | None = None
    """The environment variable holding the API key (the key itself never goes in the file)."""


@dataclass(frozen=True)
class MemorySettings:
    """Working-memory limits (DESIGN §2)."""

    working_memory_budget: PositiveInt = 8000
    """The token budget of one session's working memory."""
    compaction_trigger: Trigger = 0.85
    """The fraction of the budget at which the oldest messages are compacted into an episode."""
    compaction_strategy: CompactionStrategy = "extractive"
    """How an episode's summary is made; see :data:`COMPACTION_STRATEGIES`."""
    llm: LLMSettings | None = None
    """The endpoint the ``llm`` strategy uses (``null``: none)."""
    classifier: ClassifierName = "rules"
    """How absorb classifies a new fact; see :data:`.file_values.CLASSIFIERS`."""
    embedder: EmbedderName = DEFAULT_EMBEDDER
    """The model that embeds episodes and facts: the encoder shipped inside feral by default,
    ``"minilm-static-256"`` (the light static model) for small devices, or ``"none"`` to turn
    vector search off; see :data:`feral.storage.encoders.embedders.EMBEDDER_CHOICES`."""


@dataclass(frozen=True)
class PeerSettings:
    """One paired device."""

    node_id: PeerId
    """The peer's id: the fingerprint of the key it must prove it holds."""
    url: PeerUrl | None = None
    """Where to dial it (``ws://`` or ``wss://``), or ``None`` for a peer that only dials in."""
    insecure_plaintext: bool = False
    """Dial a ``ws://`` url beyond loopback anyway, unencrypted (``--insecure-plaintext``)."""


Peers = Annotated[tuple[PeerSettings, ...], Meta(extra={"requirement": "must be a list of peers"})]


@dataclass(frozen=True)
class SyncSettings:
    """Peer-to-peer replication."""

    peers: Peers = ()
    """Paired devices, in the order the user added them; node ids and urls are unique."""
    conflict_resolution: ConflictResolution = "last_write_wins"
    """Only row-level LWW exists (DESIGN §4); the key is kept for FERAL's shape."""
    max_clock_skew_ms: SkewMs = 300_000
    """How far ahead of our wall clock a peer's stamp may be before it is refused."""
    handshake_timeout_s: LinkSeconds = 10.0
    """A connection that has not authenticated (or not finished its HTTP request) this long
    after it opened is closed (node/links/link_guard.py)."""
    max_unauthenticated: LinkCount = 64
    """Connections upgraded to ``/sync`` but not yet authenticated; more are refused."""
    max_links_per_peer: LinkCount = 4
    """Links one paired peer may have open here at once (its server and its CLI rounds)."""
    max_frames_per_s: LinkCount = 200
    """Frames a paired peer may send per second over all its links (a 2 s burst); beyond, it is
    slowed."""
    max_mib_per_min: LinkCount = 512
    """MiB a paired peer may send per minute; beyond, it is slowed (never dropped for it)."""
    flood_drop_s: LinkSeconds = 10.0
    """A peer held back by the frame cap this long without a pause is dropped (``rate_limited``)."""
    retention_days: RetentionDays = 30
    """Log entries and tombstones every peer acknowledged are collected once this old; a peer
    silent longer gets a snapshot (storage/log/prune.py)."""
    prune_every_s: LinkSeconds = 3600.0
    """How often ``feral serve`` prunes (``feral sync prune`` runs one at once)."""
    snapshot_above_entries: SnapshotAbove = 1000
    """A peer with an empty store gets a snapshot instead of the log once the log holds more
    entries than this (-1: only when the log no longer holds what it lacks)."""


@dataclass(frozen=True)
class SearchSettings:
    """Defaults for ``feral memory search`` and ``POST /api/memory/search``."""

    top_k: TopK = DEFAULT_TOP_K
    strategy: StrategyName = DEFAULT_STRATEGY
    alpha: Fraction = DEFAULT_ALPHA
    """The vector weight in hybrid scoring, ``alpha*vector + (1-alpha)*fts`` over each leg's
    pool-normalised score (storage/search/fusion.py); 0.65 was chosen with the fusion's other
    constants (benchmarks/README.md); 0.55 did better on conversations with the session
    neighbours but not on the household set's paraphrases."""
    mmr: bool = DEFAULT_MMR
    mmr_lambda: Fraction = DEFAULT_MMR_LAMBDA
    """Relevance weight in the MMR rerank: ``lambda*rel - (1-lambda)*max_sim_to_selected``."""
    decay_per_day: Fraction = 0.001
    """How fast a memory's rank fades: ``temporal = max(0, 1 - decay * days since its last
    update)`` (identity facts exempt; storage/search/ranking.py). 0.001 keeps a year-old memory at
    64% of its relevance (README, "Ranking"); 0 turns decay off."""
    min_score: MinScore = DEFAULT_MIN_SCORE
    """Hits whose final score (relevance x temporal x importance) is below this are dropped."""


@dataclass(frozen=True)
class CliSettings:
    """How the ``feral`` command answers when no ``feral serve`` runs on its home."""

    resident_idle_s: ResidentIdle = 600.0
    """Seconds a resident node, started by ``remember`` or ``search``, stays after its last
    request (node/home/resident_runtime.py); 0: none is started. At most a day."""


@dataclass(frozen=True)
class Settings:
    """Everything in ``settings.json``."""

    name: Name = DEFAULT_NAME
    memory: MemorySettings = field(default_factory=MemorySettings)
    sync: SyncSettings = field(default_factory=SyncSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    cli: CliSettings = field(default_factory=CliSettings)


def load_settings(home: Path) -> Settings:
    """Read ``<home>/settings.json``; a missing file (or home) means the defaults.

    Raises:
        HomeFileError: the file exists but cannot be read.
        ConfigError: invalid JSON (with line and column) or an invalid value.
    """
    path = home / SETTINGS_FILENAME
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_SETTINGS_BYTES + 1)
    except FileNotFoundError:
        return Settings()
    except OSError as exc:
        raise HomeFileError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if len(raw) > MAX_SETTINGS_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_SETTINGS_BYTES} bytes; not a settings file")
    try:
        data = parse_json(raw)
    except JsonRefused as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    return settings_from_dict(data, source=str(path))


def save_settings(home: Path, settings: Settings) -> None:
    """Write ``settings`` to ``<home>/settings.json`` atomically, mode 0600.

    The JSON is indented with sorted keys and ends with a newline, so the file diffs cleanly
    and reads well by hand. The home is created (0700) if missing.

    Raises:
        ConfigError: ``settings`` holds an invalid value (nothing is written).
        HomeFileError: the home or the file cannot be written.
    """
    path = home / SETTINGS_FILENAME
    data = settings_to_dict(settings)
    settings_from_dict(data, source=str(path))
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    ensure_home(home)
    write_private_file(path, text.encode("utf-8"))


def settings_to_dict(settings: Settings) -> dict[str, object]:
    """The JSON-ready form of ``settings`` (every key present, peers as a list; a peer's
    ``insecure_plaintext`` only where it is set, so a peer keeps FERAL's shape).

    Through :func:`dataclasses.asdict`, not msgspec alone: a loaded section holds only the keys
    its file named (msgspec leaves the rest to the class's defaults) and would be saved without
    them."""
    data: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(asdict(settings)))
    for peer in data["sync"]["peers"]:
        if not peer.get("insecure_plaintext"):
            peer.pop("insecure_plaintext", None)
    return data


def settings_from_dict(data: object, *, source: str = SETTINGS_FILENAME) -> Settings:
    """Validate decoded JSON and build :class:`Settings`; missing keys take their defaults.

    Args:
        data: the decoded JSON document.
        source: what to call the document in error messages (normally the file's path).

    Raises:
        ConfigError: ``"<source>: <key path> <what is wrong>, got <value>"``.
    """
    try:
        settings = convert(_without_retired_keys(data), Settings)
        _check_across_keys(settings)
    except Invalid as exc:
        raise ConfigError(f"{source}: {exc}") from exc
    return settings


RETIRED_KEYS = (("sync", "enabled"),)
"""Keys older versions wrote and nothing reads any more (``sync.enabled`` never turned replication
off): a file that holds one still loads, with whatever value, and is saved without it."""


def _without_retired_keys(data: object) -> object:
    """``data`` with the :data:`RETIRED_KEYS` left out (a copy; the caller's document is kept)."""
    if not isinstance(data, dict):
        return data
    trimmed = dict(data)
    for section, key in RETIRED_KEYS:
        if isinstance(trimmed.get(section), dict) and key in trimmed[section]:
            trimmed[section] = {k: v for k, v in trimmed[section].items() if k != key}
    return trimmed


def _check_across_keys(settings: Settings) -> None:
    """What no single key's type can say: unique peers, and an endpoint for ``llm``."""
    memory = settings.memory
    if memory.compaction_strategy == "llm" and memory.llm is None:
        raise Invalid.value(
            ("memory", "llm"), 'must be set when compaction_strategy is "llm"', None
        )
    if memory.classifier == "llm" and memory.llm is None:
        raise Invalid.value(("memory", "llm"), 'must be set when classifier is "llm"', None)
    peers = settings.sync.peers
    for index, peer in enumerate(peers):
        for earlier, other in enumerate(peers[:index]):
            repeats = f"repeats {key_path(('sync', 'peers', earlier))}"
            if peer.node_id == other.node_id:
                raise Invalid.value(("sync", "peers", index, "node_id"), repeats, peer.node_id)
            if peer.url is not None and peer.url == other.url:
                raise Invalid.value(("sync", "peers", index, "url"), repeats, peer.url)


def with_peer(settings: Settings, peer: PeerSettings) -> Settings:
    """Pair ``peer``: replace the peer with its node id (keeping its place) or append it.

    Raises:
        ConfigError: a malformed node id or url, or a url that belongs to another peer.
    """
    try:
        convert(msgspec.to_builtins(peer), PeerSettings)
    except Invalid as exc:
        raise ConfigError(f"invalid peer: {exc}") from exc
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
