"""Reordering a hybrid search's remembered chat turns by a model fitted on conversations.

On conversations the hand-set fusion (storage/search/fusion.py) and its cues leave recall in the
ordering: the two legs' candidates and the turns beside the best hits hold about 0.9 of the
evidence of LoCoMo's tuning half, the first ten 0.76 of it. So a remembered turn ``[date] Name:
text`` is rescored by a linear model over what each stage found about it (:data:`FEATURES`:
each leg's scaled score, its cosine and BM25, the share of query words, the cues, its
neighbours' and sitting's shares, its length, whether it asks), fitted listwise (a softmax over
each question's candidates) on LoCoMo's tuning half by benchmarks/rerank_fit.py, which writes
its weights to storage/search/rerank_weights.py.

Only turns are rescored. The household set's memories (facts and notes without a stamp) lost
first places to a model fitted on conversations, and to one fitted on both sets (MRR@10 of its
paraphrases 0.86 to 0.78), or weighing the household queries enough to spare them lost
LoCoMo's gain: what a conversation's answer looks like is not what a note's does. A turn's new
score is its old one plus :data:`LIFT` of the model's weighed difference from the average
candidate turn of the tuning half (:data:`~feral.storage.search.rerank_weights.CENTRES`), in
the units of the old score, never below 0: every other memory keeps its score, and the average
turn keeps its own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from feral.sync.schema import EPISODES

from .fusion import term_coverage, time_in
from .query import Hit, content_of
from .rerank_weights import CENTRES, WEIGHTS

__all__ = ["FEATURES", "LIFT", "is_turn", "rerank", "turn_features"]

LIFT = 0.35
"""The share of the model's lift a turn takes. The model is fitted to rank (a softmax over each
question's candidates), which fixes the direction of its weights, not how far they should
move a turn from its fused score: on LoCoMo's tuning half 1, 0.75, 0.5, 0.35 and 0.2 of it read
R@10 0.783, 0.784, 0.785, 0.784 and 0.781; from 0.5 up it cost a held question of the synthetic
conversations read through ingest (a short reply said after a question, by the person the
question names) its place in the first five, below the vector leg's recall@5."""

FEATURES = (
    "score",
    "fused",
    "semantic",
    "lexical",
    "coverage",
    "cosine",
    "fts",
    "temporal",
    "speaker",
    "beside",
    "sitting",
    "only_beside",
    "says_time",
    "words",
    "words_squared",
    "asks",
    "score_share",
    "cosine_z",
)
"""What the model weighs, per candidate turn: ``score`` the fused score with its cues and
shares; ``fused`` the blend alone; ``semantic`` and ``lexical`` the two legs as the blend
scaled them; ``coverage`` the share of query words; ``cosine`` and ``fts`` the raw legs;
``temporal``, ``speaker``, ``sitting`` the cues (1 when given); ``beside`` the best score of a
neighbouring hit, ``only_beside`` 1 for a turn no leg returned; ``says_time`` a time expression
in its text; ``words`` and ``words_squared`` its length (log words / 4); ``asks`` 1 for a
question; ``score_share`` its score over the best candidate's; ``cosine_z`` its cosine in
standard deviations from the candidate turns' mean."""

_TURN = re.compile(r"^\s*\[[^\]]*\]\s*[^:\n\[\]]{1,60}:")
_STAMP = re.compile(r"^\s*\[[^\]]*\]\s*")
_WORD = re.compile(r"\w+")


def is_turn(hit: Hit) -> bool:
    """Whether ``hit`` is a remembered chat turn: an episode ``[date] Name: text``."""
    return hit.row.get("table") == EPISODES.name and bool(_TURN.match(content_of(hit.row)))


def turn_features(query: str, hits: Sequence[Hit], turns: Sequence[Hit]) -> list[list[float]]:
    """One row of :data:`FEATURES` per hit of ``turns``; ``hits`` are every candidate of the
    search for ``query``."""
    best = max((h.score for h in hits), default=0.0) or 1.0
    cosines = [t.parts.get("cosine", 0.0) for t in turns]
    mean = sum(cosines) / len(cosines) if cosines else 0.0
    spread = math.sqrt(sum((c - mean) ** 2 for c in cosines) / max(len(cosines), 1)) + 1e-6
    return [_row(query, turn, best, mean, spread) for turn in turns]


def _row(query: str, turn: Hit, best: float, mean: float, spread: float) -> list[float]:
    parts = turn.parts
    text = _STAMP.sub("", content_of(turn.row), count=1)
    tokens = _WORD.findall(text)
    words = math.log1p(len(tokens)) / 4.0
    coverage = parts.get("coverage", 0.0)
    if "fused" in parts and "coverage" not in parts:  # a candidate of the vector leg
        coverage = term_coverage(query, turn)
    return [
        turn.score,
        parts.get("fused", 0.0),
        parts.get("semantic", 0.0),
        parts.get("lexical", 0.0),
        coverage,
        parts.get("cosine", 0.0),
        turn.fts_score,
        parts.get("temporal", 0.0),
        parts.get("speaker", 0.0),
        parts.get("beside", 0.0),
        parts.get("sitting", 0.0),
        1.0 if "beside" in parts and "fused" not in parts else 0.0,
        1.0 if time_in(tokens) else 0.0,
        words,
        words * words,
        1.0 if text.rstrip().endswith("?") else 0.0,
        turn.score / best,
        (parts.get("cosine", 0.0) - mean) / spread,
    ]


def rerank(
    query: str,
    hits: Sequence[Hit],
    limit: int,
    weights: Mapping[str, float] = WEIGHTS,
    centres: Mapping[str, float] = CENTRES,
    lift: float = LIFT,
) -> list[Hit]:
    """``hits`` (the candidates of a hybrid search for ``query``, storage/search/hybrid.py) with
    each turn's score
    rescored by ``weights``; the first ``limit``, best first. With ``weights`` empty, or no
    weight on ``score``, the order is the fused one."""
    own = weights.get("score", 0.0)
    turns = [h for h in hits if is_turn(h)]
    if own > 0 and turns:
        scale = [lift * weights.get(f, 0.0) / own for f in FEATURES[1:]]
        offset = sum(w * centres.get(f, 0.0) for w, f in zip(scale, FEATURES[1:], strict=True))
        for turn, row in zip(turns, turn_features(query, hits, turns), strict=True):
            raised = sum(w * x for w, x in zip(scale, row[1:], strict=True)) - offset
            turn.score = max(0.0, turn.score + raised)
    return sorted(hits, key=lambda h: (-h.score, h.id))[:limit]
