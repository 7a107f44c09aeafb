"""The limits on what settings, the HTTP API and the CLI accept, declared once as types.

Each name here is an ``Annotated`` type whose :class:`msgspec.Meta` carries its bounds; the
settings (node/config.py), the API's request bodies (node/search.py, node/api/routes.py) and
the OpenAPI document (node/api/schema.py) all use these types, and the CLI builds its click
ranges from the constants beside them, so a limit changed here changes everywhere at once.

``Meta.extra`` may hold two things for node/validation.py: ``"requirement"``, the wording of an
error about a value of the type, and ``"check"``, a test the bounds cannot say (a URL's shape,
printable text), which returns what is wrong or ``None``.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from msgspec import Meta

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

MIN_TOP_K = 1
MAX_TOP_K = 1000
"""The most results one search returns (settings, ``--top-k`` and the API alike)."""
DEFAULT_TOP_K = 10
"""The ``search.top_k`` setting's default (node/config.py), here for the CLI's help to read
without importing the settings."""
MAX_QUERY_CHARS = 10_000
MAX_EPISODES = 100_000
"""The most episodes one listing returns."""
DEFAULT_EPISODES = 20
DEFAULT_SESSION = "default"
"""The session a tool call is logged under when the caller names none (node/exec_log.py)."""
DEFAULT_LOG_LIMIT = 20
MAX_LOG_LIMIT = 1000
"""The most execution-log entries one listing or search returns."""
MAX_LATENCY_MS = 86_400_000
"""A day: a logged tool call's latency beyond it is a mistake in the caller, not a slow tool."""
FRACTION_RANGE = (0.0, 1.0)
"""The closed interval of ``alpha`` and ``mmr_lambda`` (weights in the scoring formulas)."""

Strategy = Literal["fts", "vector", "hybrid"]
"""Which search legs run (DESIGN §2)."""
SEARCH_STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)
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
MAX_IMPORTANCE = 10.0
"""The largest importance multiplier ``feral memory boost`` sets (so the largest final score)."""
Importance = Annotated[float, Meta(gt=0, le=MAX_IMPORTANCE)]
"""A memory's importance multiplier: above 0 (0 would hide it; archive does that), at most 10."""
MinScore = Annotated[float, Meta(ge=0, le=MAX_IMPORTANCE)]
"""The lowest final score a search keeps (0 keeps every hit)."""
Query = Annotated[
    str,
    Meta(min_length=1, max_length=MAX_QUERY_CHARS, pattern=r"\S", extra={"check": unicode_problem}),
]
