"""The value types only ``settings.json`` takes, each with the check its type cannot say.

A node's name and a peer's label (printable, so they cannot forge terminal lines), a peer's node
id and ``ws://``/``wss://`` URL, an LLM endpoint's URL and key variable, the embedder's name, the
settings-only ranges (clock skew, retention, compaction trigger, resident idle time) and the
choices of the ``Literal`` keys. They are apart from the dataclasses that use them
(node/settings/config.py), which read as the file's shape; the limits the HTTP API and the CLI
share with the settings are in node/settings/limits.py. ``Meta.extra`` carries each type's
wording and check for node/settings/validation.py.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args
from urllib.parse import urlsplit

from msgspec import Meta

from feral.storage.encoders.embedders import EMBEDDER_CHOICES
from feral.sync.delta import check_node_id
from feral.sync.errors import ProtocolError
from feral.sync.types import NodeId

from .validation import one_of

__all__ = [
    "CLASSIFIERS",
    "COMPACTION_STRATEGIES",
    "CONFLICT_RESOLUTIONS",
    "MAX_CLOCK_SKEW_MS",
    "ClassifierName",
    "CompactionStrategy",
    "ConflictResolution",
    "EmbedderName",
    "EnvName",
    "HttpUrl",
    "Label",
    "Name",
    "PeerId",
    "PeerUrl",
    "ResidentIdle",
    "RetentionDays",
    "SkewMs",
    "SnapshotAbove",
    "Trigger",
]

MAX_NAME_LENGTH = 64
MAX_CLOCK_SKEW_MS = 3_600_000
"""The hard cap on ``sync.max_clock_skew_ms`` (one hour; TEST-CATALOG, "Clock")."""

ConflictResolution = Literal["last_write_wins"]
CONFLICT_RESOLUTIONS: tuple[str, ...] = get_args(ConflictResolution)
CompactionStrategy = Literal["extractive", "llm"]
ClassifierName = Literal["rules", "llm"]
CLASSIFIERS: tuple[str, ...] = get_args(ClassifierName)
"""How ``remember`` classifies a fact against what is stored: ``rules`` (offline, deterministic,
the default) or ``llm`` (``memory.llm``'s endpoint; any failure falls back to the rules:
node/absorb/llm_classify.py)."""
COMPACTION_STRATEGIES: tuple[str, ...] = get_args(CompactionStrategy)
"""``extractive`` needs no model, so compaction works offline; ``llm`` needs ``memory.llm`` and
falls back to ``extractive`` whenever the endpoint fails (node/assistant/summarise.py)."""
PRINTABLE = "must be a non-empty string of printable characters"
WS_URL = "must be null or a ws:// or wss:// URL with a host"
HTTP_URL = "must be an http:// or https:// URL with a host"
NODE_ID = "must be a node id: 32 characters of lower-case base32 (a-z, 2-7)"


def _printable(value: object) -> str | None:
    """A label for status output and peers: printable, so it cannot forge lines in a terminal."""
    text = str(value)
    return None if text.strip() and text.isprintable() else PRINTABLE


def _node_id(value: object) -> str | None:
    try:
        check_node_id(value)
    except ProtocolError:
        return NODE_ID
    return None


def _url_with(schemes: tuple[str, ...], requirement: str) -> Any:
    """A check that a string is a URL of one of ``schemes`` with a host and a valid port."""

    def check(value: object) -> str | None:
        text = str(value)
        if any(ch.isspace() for ch in text):
            return requirement
        try:
            parts = urlsplit(text)
            parts.port  # noqa: B018 -- raises ValueError for a port out of range
        except ValueError:
            return requirement
        return None if parts.scheme in schemes and parts.hostname else requirement

    return check


def _one_of(choices: tuple[str, ...]) -> Any:
    wording = one_of(choices)
    return lambda value: None if value in choices else wording


Name = Annotated[
    str, Meta(max_length=MAX_NAME_LENGTH, extra={"requirement": PRINTABLE, "check": _printable})
]
Label = Annotated[str, Meta(extra={"requirement": PRINTABLE, "check": _printable})]
PeerId = Annotated[NodeId, Meta(extra={"requirement": NODE_ID, "check": _node_id})]
PeerUrl = Annotated[
    str, Meta(extra={"requirement": WS_URL, "check": _url_with(("ws", "wss"), WS_URL)})
]
HttpUrl = Annotated[
    str, Meta(extra={"requirement": HTTP_URL, "check": _url_with(("http", "https"), HTTP_URL)})
]
EnvName = Annotated[
    str,
    Meta(
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        extra={"requirement": "must be null or an environment variable name"},
    ),
]
EmbedderName = Annotated[
    str,
    Meta(
        extra_json_schema={"enum": list(EMBEDDER_CHOICES)},
        extra={"requirement": one_of(EMBEDDER_CHOICES), "check": _one_of(EMBEDDER_CHOICES)},
    ),
]
SkewMs = Annotated[int, Meta(ge=1, le=MAX_CLOCK_SKEW_MS)]
RetentionDays = Annotated[float, Meta(gt=0, le=36_500)]
SnapshotAbove = Annotated[int, Meta(ge=-1)]
Trigger = Annotated[float, Meta(gt=0, le=1)]
"""A fraction of the budget: 1 is the whole budget, 0 would compact on every message."""
ResidentIdle = Annotated[float, Meta(ge=0, le=86_400)]
"""Seconds, from 0 (no resident) to a day."""
