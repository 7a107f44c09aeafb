"""Hybrid fusion: blending the BM25 and cosine legs so the blend never ranks below its better leg.

Why not the plain blend of raw scores: a max-normalised BM25 gives the best lexical match of
every query 1.0, even when it shares only a common word with the query, while the cosines of a
query's candidates differ by 0.05 to 0.2. Blended 50/50, the lexical leg decides the order, and
on queries worded differently from their memory the hybrid did worse than the vector leg alone.

So each leg is normalised over its own candidate pool (min-max: the leg's best candidate scores
1 and its weakest 0, so both legs spread over the same range; see :func:`min_max` for a leg that
returned fewer candidates than it was asked for; the vector leg's spread counts as at least
:data:`MIN_COSINE_SPAN`, so candidates it can barely tell apart stay close), and a candidate a
leg did not return scores 0 in it: it ranked below that leg's whole pool. The lexical score of
a candidate is also weighted by the share of the query's words it holds (as the full-text index
matches them, by stem in the episodes' index; :func:`lexical_weight`): BM25 gives a rare word a
large weight whatever else the query says, so a memory that shares one word out of four with the
query is weak lexical evidence, and one that holds every word is strong. The fused score is
``alpha * vector + (1 - alpha) * lexical``; candidates whose fused score is below
:data:`NOISE_FLOOR` are dropped.

A lexical candidate the vector leg did not return is scored in that leg by its own cosine
(:func:`~feral.storage.search.query.cosines_of`, read from the vectors held in memory), on the
same scale as the leg's candidates: on conversations many answers are found by one leg only, and
a cosine of 0 called them meaningless (benchmarks/README.md, Fusion tuning).

A question that asks *when* (:func:`asks_when`) is answered by what someone said about a time:
"yesterday", "last week", "two weekends ago", "in May". Every remembered chat turn carries the
date it was said, in its leading ``[date]`` stamp, so the stamp tells nothing apart; the words
said do. :func:`temporal_cue` adds :data:`TEMPORAL_CUE` to the fused score of each candidate
whose text, stamp left out, holds such a time expression.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence

from .query import STOP_WORDS, Hit, content_of, query_terms

__all__ = [
    "COVERAGE_POWER",
    "FUSION_POOL",
    "LONG_QUERY_ALPHA",
    "LONG_QUERY_WORDS",
    "MIN_COSINE_SPAN",
    "NOISE_FLOOR",
    "SPEAKER_CUE",
    "TEMPORAL_CUE",
    "TIME_WORDS",
    "alpha_for",
    "asks_when",
    "fuse",
    "fusion_pool_size",
    "lexical_weight",
    "min_max",
    "says_time",
    "time_in",
    "speaker_cue",
    "temporal_cue",
    "term_coverage",
]

FUSION_POOL = 50
"""Candidates each leg contributes to a hybrid search (never fewer than ``k``): min-max needs a
pool deeper than the page shown, or the page's last hit would always score 0."""
COVERAGE_POWER = 2.0
"""The power of the share of query words that weighs a lexical match (:func:`lexical_weight`)."""
MIN_COSINE_SPAN = 0.5
"""The vector leg's candidates are spread over at least this much cosine before they are
scaled to [0, 1] (:func:`fuse`). Min-max alone stretches any spread to the full range: on
conversations, where a question is about as close to a hundred turns (cosines 0.45 to 0.55), a
vector leg that cannot tell them apart outvoted a lexical leg that could, and the hybrid fell
below its lexical leg. With the floor, close cosines stay close; on the household set, whose
vector candidates spread wider, little changes. Chosen with ``alpha`` 0.65 and the square of
the share (benchmarks/fusion_tuning.py, benchmarks/README.md)."""
NOISE_FLOOR = 0.05
"""A fused score below this is noise: near the bottom of both legs' pools."""
LONG_QUERY_WORDS = 5
"""A query of this many distinct words or more, stop words left out, is long (:func:`alpha_for`)."""
LONG_QUERY_ALPHA = 0.4
"""The most a long query weighs the vector leg when the search was not given an alpha: five
words or more give the lexical leg enough to tell a turn that holds most of them from one that
shares a name. Chosen on LoCoMo's tuning half among 3 to 6 words and 0.3 to 0.55; it leaves
every household figure as it was, whose long queries are paraphrases the vector leg finds
either way (benchmarks/README.md)."""
TEMPORAL_CUE = 0.1
"""What a time expression adds to a candidate's fused score when the query asks when (chosen on
LoCoMo's tuning half among 0.02 to 0.3: benchmarks/README.md)."""

SPEAKER_CUE = 0.05
"""What a remembered turn ``[date] Name: text`` gains when the query names its speaker
(:func:`speaker_cue`; chosen on LoCoMo's tuning half among 0.03 to 0.12: benchmarks/README.md)."""

_WORD = re.compile(r"\w+", re.UNICODE)
_ASKS_WHEN = re.compile(
    r"\b(when|what (?:year|month|date|day|time)|which (?:year|month|day)|how long)\b",
    re.IGNORECASE,
)
_MONTHS = "january february march april may june july august september october november december"
_DAYS = " ".join(f"{d}day {d}days" for d in "mon tues wednes thurs fri satur sun".split())
TIME_WORDS = frozenset(
    f"yesterday today tonight tomorrow ago recently earlier since last next weekend weekends "
    f"week weeks month months year years {_DAYS} {_MONTHS}".split()
)
"""Words that say a time (:func:`says_time`); a year from 1900 to 2099 does too."""
_STAMP = re.compile(r"^\s*\[[^\]]*\]\s*")
_SPEAKER = re.compile(r"^\s*\[[^\]]*\]\s*([^:\n\[\]]{1,60}):")


def fusion_pool_size(k: int) -> int:
    """How many candidates each leg fetches for a hybrid search of ``k`` results."""
    return max(k, FUSION_POOL)


def alpha_for(query: str, alpha: float) -> float:
    """The vector weight for ``query`` when the search was not given one: ``alpha`` (the
    settings'), at most :data:`LONG_QUERY_ALPHA` for a query of :data:`LONG_QUERY_WORDS` words or
    more."""
    if len(query_terms(query)) >= LONG_QUERY_WORDS:
        return min(alpha, LONG_QUERY_ALPHA)
    return alpha


def min_max(values: Sequence[float], pool: int) -> tuple[float, float]:
    """The ``(low, span)`` that maps a leg's candidate scores onto [0, 1].

    A full pool (``pool`` candidates or more) was cut off at its weakest candidate, so that one
    is the floor. A leg that returned fewer returned every row it could score, and everything
    else in the store scores 0 in it (no word in common, or no likeness), so 0 is the floor: in a
    small store the third of three matches is not pushed to 0 just for being last.
    """
    if not values:
        return 0.0, 0.0
    low = min(values) if len(values) >= pool else min(0.0, *values)
    return low, max(values) - low


def _scaled(value: float, low: float, span: float) -> float:
    """``value`` on the pool's [0, 1] scale; with no spread every candidate is the best."""
    if span <= 0.0:
        return 1.0 if value >= low else 0.0
    return min(1.0, max(0.0, (value - low) / span))


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def term_coverage(query: str, hit: Hit) -> float:
    """The share of the query's words that occur in the hit's text, stop words left out unless
    the query has nothing else (as :func:`~feral.storage.search.query.fts_query` does): as the
    full-text index found them (by stem in the episodes' index) when the lexical leg measured
    it (``hit.coverage``), else word for word."""
    if hit.coverage is not None:
        return hit.coverage
    words = _words(query)
    wanted = {w for w in words if w not in STOP_WORDS} or words
    if not wanted:
        return 0.0
    return len(wanted & _words(content_of(hit.row))) / len(wanted)


def lexical_weight(query: str, hit: Hit, power: float = COVERAGE_POWER) -> float:
    """How far a lexical match is evidence: :func:`term_coverage` to the power ``power``
    (:data:`COVERAGE_POWER`), so a hit holding half the query's words counts a quarter and
    one holding them all counts fully (plain coverage let one-word distractors cost the
    household set's paraphrases their first place; see benchmarks/README.md)."""
    return float(term_coverage(query, hit) ** power)


def _semantic(
    vector: Sequence[Hit], cosines: Mapping[str, float], min_cosine_span: float
) -> dict[str, float]:
    """Each candidate's cosine on the vector leg's [0, 1] scale, by id: the vector leg's own and
    the lexical candidates' it did not return (``cosines``), over the span from cosine 0 to the
    leg's best (at least ``min_cosine_span``). From 0, not from the pool's weakest: a lexical
    candidate just below the pool keeps nearly the weight of the pool's last (:func:`fuse`)."""
    span = max((h.vector_score for h in vector), default=0.0)
    if span > 0:
        span = max(span, min_cosine_span)
    semantic = {h.id: _scaled(h.vector_score, 0.0, span) for h in vector}
    for hit_id, cosine in cosines.items():
        semantic.setdefault(hit_id, _scaled(cosine, 0.0, span))
    return semantic


def fuse(
    query: str,
    fts: Sequence[Hit],
    vector: Sequence[Hit],
    alpha: float,
    limit: int,
    pool: int,
    waiting: Collection[str] = frozenset(),
    coverage_power: float = COVERAGE_POWER,
    min_cosine_span: float = MIN_COSINE_SPAN,
    cosines: Mapping[str, float] | None = None,
) -> list[Hit]:
    """Blend the two legs by id, best first, with the noise dropped.

    A row still waiting in the embedding queue (embedding runs off the write path) has no
    vector, so the vector leg cannot have returned it: it is judged by its lexical score in both
    legs, and never dropped as noise, so a search right after a large import still finds by
    full text what the vector leg cannot see yet (with nothing embedded, the full-text order).

    Args:
        query: the query text (for the share of its words each lexical hit holds).
        fts: the lexical leg's candidates, with ``fts_score`` set.
        vector: the vector leg's candidates, with ``vector_score`` set.
        alpha: the weight of the vector leg.
        limit: the most results.
        pool: how many candidates each leg was asked for (:func:`fusion_pool_size`).
        waiting: ids of the lexical candidates not embedded yet.
        coverage_power: the power of the share of query words in :func:`lexical_weight`.
        min_cosine_span: the least spread the vector leg's scores are scaled over.
        cosines: the cosine of each lexical candidate the vector leg did not return, by id
            (:func:`~feral.storage.search.query.cosines_of`); one left out scores 0 in it.
    """
    f_low, f_span = min_max([h.fts_score for h in fts], pool)
    known = dict(cosines or {})
    semantic = _semantic(vector, known, min_cosine_span)
    merged: dict[str, Hit] = {h.id: h for h in vector}
    lexical: dict[str, float] = {}
    for hit in fts:
        lexical[hit.id] = _scaled(hit.fts_score, f_low, f_span) * lexical_weight(
            query, hit, coverage_power
        )
        if hit.id in merged:
            merged[hit.id].fts_score = hit.fts_score
        else:
            merged[hit.id] = hit
            hit.vector_score = known.get(hit.id, hit.vector_score)
    for hit_id in waiting:
        if hit_id in lexical:
            semantic[hit_id] = lexical[hit_id]
    for hit in merged.values():
        hit.score = alpha * semantic.get(hit.id, 0.0) + (1.0 - alpha) * lexical.get(hit.id, 0.0)
    _record_parts(fts, vector, merged, semantic, lexical)
    kept = [h for h in merged.values() if h.score >= NOISE_FLOOR or h.id in waiting]
    return sorted(kept, key=lambda h: (-h.score, h.id))[:limit]


def _record_parts(
    fts: Sequence[Hit],
    vector: Sequence[Hit],
    merged: Mapping[str, Hit],
    semantic: Mapping[str, float],
    lexical: Mapping[str, float],
) -> None:
    """Keep in each hit's ``parts`` what the fusion knew of it, for the reranker
    (storage/search/rerank.py): each leg's scaled score and rank, the share of query words
    where the full-text index measured it."""
    for rank, hit in enumerate(fts):
        merged[hit.id].parts["fts_rank"] = 1.0 / (1.0 + rank)
    for rank, hit in enumerate(vector):
        merged[hit.id].parts["vector_rank"] = 1.0 / (1.0 + rank)
    for hit in merged.values():
        hit.parts.update(
            semantic=semantic.get(hit.id, 0.0),
            lexical=lexical.get(hit.id, 0.0),
            cosine=hit.vector_score,
            fused=hit.score,
        )
        if hit.coverage is not None:  # else the reranker counts words, for turns only
            hit.parts["coverage"] = hit.coverage


def says_time(text: str) -> bool:
    """Whether ``text`` holds a time expression ("yesterday", "last week", "in May", "2023")."""
    return time_in(_WORD.findall(text))


def time_in(words: Iterable[str]) -> bool:
    """Whether any of ``words`` (a text's ``\\w+`` runs) is one of :data:`TIME_WORDS` or a
    year: a set lookup per word, where one case-blind regex over the text took 30 µs a turn."""
    for word in words:
        folded = word.casefold()
        if folded in TIME_WORDS or (len(word) == 4 and word[:2] in ("19", "20") and word.isdigit()):
            return True
    return False


def asks_when(query: str) -> bool:
    """Whether ``query`` asks for a time ("when", "what year", "how long", ...)."""
    return _ASKS_WHEN.search(query) is not None


def temporal_cue(query: str, hits: Sequence[Hit], cue: float = TEMPORAL_CUE) -> list[Hit]:
    """``hits`` best first, each whose text holds a time expression (a leading ``[date]``
    stamp left out) raised by ``cue`` when ``query`` asks when; otherwise as they were."""
    if not asks_when(query) or cue == 0.0:
        return list(hits)
    for hit in hits:
        if says_time(_STAMP.sub("", content_of(hit.row), count=1)):
            hit.score += cue
            hit.parts["temporal"] = 1.0
    return sorted(hits, key=lambda h: (-h.score, h.id))


def speaker_cue(query: str, hits: Sequence[Hit], cue: float = SPEAKER_CUE) -> list[Hit]:
    """``hits`` best first, each turn ``[date] Name: text`` whose speaker the query names raised
    by ``cue``. "What did Caroline say about ..." is answered by what Caroline said, but her
    name is as often in the other speaker's turns, said to her, and full text cannot tell the
    two apart."""
    named = {w.strip('"') for w in query_terms(query)}
    for hit in hits:
        said_by = _SPEAKER.match(content_of(hit.row))
        if said_by and _words(said_by.group(1)) & named:
            hit.score += cue
            hit.parts["speaker"] = 1.0
    return sorted(hits, key=lambda h: (-h.score, h.id))
