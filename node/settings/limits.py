"""The limits on what settings, the HTTP API and the CLI accept, declared once as types.

Each name here is an ``Annotated`` type whose :class:`msgspec.Meta` carries its bounds; the settings
(node/settings/config.py), the API's request bodies (node/recall/search.py, node/api/routes.py) and
the OpenAPI document (node/api/schema.py) all use these types, and the CLI builds its click ranges
from the constants beside them (node/settings/bounds.py, re-exported here), so a limit changed there
changes everywhere at once.

``Meta.extra`` may hold two things for node/settings/validation.py: ``"requirement"``, the wording
of an error about a value of the type, and ``"check"``, a test the bounds cannot say (a URL's shape,
printable text), which returns what is wrong or ``None``.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from .bounds import (
    DEFAULT_EPISODES,
    DEFAULT_LOG_LIMIT,
    DEFAULT_SESSION,
    DEFAULT_TOP_K,
    FRACTION_RANGE,
    MAX_EPISODES,
    MAX_IMPORTANCE,
    MAX_LATENCY_MS,
    MAX_LOG_LIMIT,
    MAX_QUERY_CHARS,
    MAX_TOP_K,
    MIN_TOP_K,
    SEARCH_STRATEGIES,
    Strategy,
)
from .validation import one_of

__all__ = [
    "DEFAULT_EPISODES",
    "DEFAULT_LOG_LIMIT",
    "DEFAULT_SESSION",
    "DEFAULT_TOP_K",
    "FRACTION_RANGE",
    "LinkCount",
    "LinkSeconds",
    "MAX_IMPORTANCE",
    "MAX_LATENCY_MS",
    "MAX_LOG_LIMIT",
    "MAX_EPISODES",
    "MAX_QUERY_CHARS",
    "MAX_TOP_K",
    "MIN_TOP_K",
    "SEARCH_STRATEGIES",
    "EpisodeLimit",
    "Fraction",
    "Importance",
    "MinScore",
    "PositiveInt",
    "Query",
    "Strategy",
    "StrategyName",
    "Text",
    "TopK",
    "unicode_problem",
]

StrategyName = Annotated[Strategy, Meta(extra={"requirement": one_of(SEARCH_STRATEGIES)})]
"""A :data:`Strategy` whose errors list the choices in the order above."""


def unicode_problem(value: object) -> str | None:
    """Why a decoded JSON string is not Unicode text (a lone surrogate), or ``None``."""
    try:
        str(value).encode("utf-8")
    except UnicodeEncodeError:
        return "must be Unicode text (it holds a lone surrogate)"
    return None


PositiveInt = Annotated[int, Meta(ge=1)]
LinkSeconds = Annotated[float, Meta(ge=0.1, le=3600.0)]
"""A link deadline or delay in seconds (``sync.handshake_timeout_s``, ``sync.flood_drop_s``)."""
LinkCount = Annotated[int, Meta(ge=1, le=100_000)]
"""A cap on connections or on a peer's rate (the ``sync.max_*`` settings)."""
TopK = Annotated[int, Meta(ge=MIN_TOP_K, le=MAX_TOP_K)]
EpisodeLimit = Annotated[int, Meta(ge=1, le=MAX_EPISODES)]
Fraction = Annotated[float, Meta(ge=FRACTION_RANGE[0], le=FRACTION_RANGE[1])]
Text = Annotated[str, Meta(min_length=1, pattern=r"\S", extra={"check": unicode_problem})]
"""A non-blank string, as a fact or a triple's part."""
Importance = Annotated[float, Meta(gt=0, le=MAX_IMPORTANCE)]
"""A memory's importance multiplier: above 0 (0 would hide it; archive does that), at most 10."""
MinScore = Annotated[float, Meta(ge=0, le=MAX_IMPORTANCE)]
"""The lowest final score a search keeps (0 keeps every hit)."""
Query = Annotated[
    str,
    Meta(min_length=1, max_length=MAX_QUERY_CHARS, pattern=r"\S", extra={"check": unicode_problem}),
]
