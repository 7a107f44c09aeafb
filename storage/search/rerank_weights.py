"""The turn reranker's weights (storage/search/rerank.py), written by
``python -m benchmarks rerank --data PATH --write`` (benchmarks/rerank_fit.py): do not
edit by hand. Fitted on 786 questions of the tuning half's 5 conversations.
"""

from __future__ import annotations

__all__ = ["CENTRES", "WEIGHTS"]

WEIGHTS: dict[str, float] = {
    "score": 0.737243,
    "fused": 0.335956,
    "semantic": -0.377075,
    "lexical": 0.872943,
    "coverage": 0.558143,
    "cosine": 0.165906,
    "fts": 1.516778,
    "temporal": 1.160847,
    "speaker": 1.847530,
    "beside": 1.499938,
    "sitting": 0.723751,
    "only_beside": 1.033201,
    "says_time": 0.575848,
    "words": 0.628503,
    "words_squared": 0.969855,
    "asks": -0.708846,
    "score_share": 1.157639,
    "cosine_z": 0.493109,
}
"""Each feature's weight in the linear model."""
CENTRES: dict[str, float] = {
    "score": 0.347899,
    "fused": 0.292286,
    "semantic": 0.587746,
    "lexical": 0.025240,
    "coverage": 0.279268,
    "cosine": 0.370555,
    "fts": 0.158006,
    "temporal": 0.032373,
    "speaker": 0.592310,
    "beside": 0.100356,
    "sitting": 0.212083,
    "only_beside": 0.092343,
    "says_time": 0.160975,
    "words": 0.781774,
    "words_squared": 0.629040,
    "asks": 0.295778,
    "score_share": 0.435766,
    "cosine_z": -0.000000,
}
"""Each feature's mean over the candidate turns the model was fitted on."""
