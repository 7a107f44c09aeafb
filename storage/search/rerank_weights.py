"""The turn reranker's weights (storage/search/rerank.py), written by
``python -m benchmarks rerank --data PATH --write`` (benchmarks/rerank_fit.py): do not
edit by hand. Fitted on 786 questions of the tuning half's 5 conversations.
"""

from __future__ import annotations

__all__ = ["CENTRES", "WEIGHTS"]

WEIGHTS: dict[str, float] = {
    "score": 0.770754,
    "fused": 0.321997,
    "semantic": -0.459846,
    "lexical": 0.827260,
    "coverage": 0.506007,
    "cosine": 0.104241,
    "fts": 1.701671,
    "temporal": 1.243595,
    "speaker": 1.716749,
    "beside": 1.945130,
    "sitting": 0.763573,
    "only_beside": 1.133237,
    "says_time": 0.581892,
    "words": 0.714743,
    "words_squared": 1.118075,
    "asks": -0.702022,
    "score_share": 1.327905,
    "cosine_z": 0.430517,
}
"""Each feature's weight in the linear model."""
CENTRES: dict[str, float] = {
    "score": 0.330881,
    "fused": 0.275105,
    "semantic": 0.552213,
    "lexical": 0.024473,
    "coverage": 0.274076,
    "cosine": 0.356821,
    "fts": 0.152243,
    "temporal": 0.030270,
    "speaker": 0.619423,
    "beside": 0.098086,
    "sitting": 0.199491,
    "only_beside": 0.123809,
    "says_time": 0.157068,
    "words": 0.779470,
    "words_squared": 0.625452,
    "asks": 0.290497,
    "score_share": 0.418826,
    "cosine_z": -0.000000,
}
"""Each feature's mean over the candidate turns the model was fitted on."""
