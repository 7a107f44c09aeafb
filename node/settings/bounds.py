"""The numbers behind node/settings/limits.py's types: bounds and defaults, with no msgspec.

node/settings/limits.py declares each limit as an ``Annotated`` type for settings and the API; the
CLI builds its click ranges and defaults from these plain values, so listing the commands (``feral
--help``) need not import msgspec (and its typing_extensions, decimal and JSON schema modules).
node/settings/limits.py re-exports its bounds, so either import reads the same value; the ``search``
settings' defaults (node/settings/config.py) are read from here, so that ``feral memory search -h``
shows them without loading the settings module.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_EPISODES",
    "DEFAULT_LOG_LIMIT",
    "DEFAULT_MIN_SCORE",
    "DEFAULT_MMR",
    "DEFAULT_MMR_LAMBDA",
    "DEFAULT_SESSION",
    "DEFAULT_STRATEGY",
    "DEFAULT_TOP_K",
    "FRACTION_RANGE",
    "MAX_EPISODES",
    "MAX_IMPORTANCE",
    "MAX_LATENCY_MS",
    "MAX_LOG_LIMIT",
    "MAX_QUERY_CHARS",
    "MAX_TOP_K",
    "MIN_TOP_K",
    "SEARCH_STRATEGIES",
    "Strategy",
]

MIN_TOP_K = 1
MAX_TOP_K = 1000
"""The most results one search returns (settings, ``--top-k`` and the API alike)."""
DEFAULT_TOP_K = 10
"""The ``search.top_k`` setting's default (node/settings/config.py)."""
MAX_QUERY_CHARS = 10_000
MAX_EPISODES = 100_000
"""The most episodes one listing returns."""
DEFAULT_EPISODES = 20
DEFAULT_SESSION = "default"
"""The session a tool call is logged under when the caller names none
(node/assistant/exec_log.py)."""
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
MAX_IMPORTANCE = 10.0
"""The largest importance multiplier ``feral memory boost`` sets (so the largest final score)."""

DEFAULT_STRATEGY: Strategy = "hybrid"
"""The ``search.strategy`` setting's default (node/settings/config.py), like the ones below."""
DEFAULT_ALPHA = 0.65
DEFAULT_MMR = False
DEFAULT_MMR_LAMBDA = 0.7
DEFAULT_MIN_SCORE = 0.0
