"""The absorb pipeline: where its near-duplicate threshold comes from.

``python -m benchmarks absorb-pairs [--json] [--embedder NAME]``: the labelled pairs of
benchmarks/absorb/near_duplicates.jsonl (the same fact said twice, and look-alikes: two
doctors, two birthdays, a yes and a no) classified by node/absorb/classify.py's ``decide`` with each
duplicate cosine from 0.50 to 0.95: precision and recall of "duplicate" per threshold, with
the full rule (cosine, word overlap, the same names and numbers, the same polarity) and with
the cosine alone, to show what the guards buy.

``python -m benchmarks absorb-cost``: what the pipeline costs (benchmarks/absorb_cost.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from feral.node.absorb.classify import DUPLICATE_COSINE, Thresholds, decide, fact_text
from feral.node.absorb.fact_rules import is_single_valued, opposite, slot
from feral.node.absorb.phrases import parse_fact
from feral.storage.absorb.absorb_store import Candidates
from feral.storage.encoders.embedders import DEFAULT_EMBEDDER, load_embedder
from feral.sync.ids import fact_id, normalise

__all__ = ["PAIRS_FILE", "Pair", "load_pairs", "measure_pairs", "render_pairs"]

PAIRS_FILE = Path(__file__).resolve().parent / "absorb" / "near_duplicates.jsonl"
THRESHOLDS = tuple(sorted({round(0.5 + 0.05 * step, 2) for step in range(10)} | {DUPLICATE_COSINE}))
"""Every 0.05 from 0.50, and the default (node/absorb/classify.py), whichever it is."""


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    duplicate: bool
    why: str


def load_pairs(path: Path = PAIRS_FILE) -> list[Pair]:
    with path.open(encoding="utf-8") as handle:
        return [Pair(**json.loads(line)) for line in handle if line.strip()]


def _row(triple: tuple[str, str, str]) -> dict[str, Any]:
    subject, predicate, obj = triple
    row_id = fact_id(subject, predicate, obj)
    return {"id": row_id, "subject": subject, "predicate": predicate, "object": obj,
            "archived": False, "deleted": False}  # fmt: skip


def pair_candidates(
    stored: tuple[str, str, str], new: tuple[str, str, str], cosine: float
) -> Candidates:
    """What storage would hand ``decide`` for ``new`` when ``stored`` is the one stored fact."""
    row = _row(stored)
    same_subject = normalise(stored[0]) == normalise(new[0])
    name = slot(new[1])
    in_slot = same_subject and is_single_valued(name) and slot(stored[1]) == name
    exact = row if row["id"] == _row(new)["id"] else None
    against = (
        same_subject and stored[1] == opposite(new[1]) and normalise(stored[2]) == normalise(new[2])
    )
    return Candidates(
        new,
        exact,
        [row] if in_slot and exact is None else [],
        row if against else None,
        [] if exact is not None else [(row, cosine)],
    )


def measure_pairs(embedder_name: str = DEFAULT_EMBEDDER) -> list[dict[str, Any]]:
    """Precision and recall of "duplicate" per threshold (full rule and cosine alone)."""
    pairs = load_pairs()
    embedder = load_embedder(embedder_name)
    assert embedder is not None, "the pairs need an embedding model"
    triples = [(parse_fact(p.a), parse_fact(p.b)) for p in pairs]
    texts = [fact_text(*t) for both in triples for t in both]
    vectors = embedder.embed(texts)
    cosines = [_cosine(vectors[2 * i], vectors[2 * i + 1]) for i in range(len(pairs))]
    table = []
    for threshold in THRESHOLDS:
        limits = Thresholds(duplicate_cosine=threshold)
        full = [
            decide(pair_candidates(a, b, cos), limits).classification == "duplicate"
            for (a, b), cos in zip(triples, cosines, strict=True)
        ]
        alone = [cos >= threshold for cos in cosines]
        table.append({"threshold": threshold, **_scores("rule", full, pairs),
                      **_scores("cosine", alone, pairs)})  # fmt: skip
    return table


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = (sum(x * x for x in a) * sum(y * y for y in b)) ** 0.5
    return dot / norm if norm else 0.0


def _scores(prefix: str, predicted: list[bool], pairs: list[Pair]) -> dict[str, float]:
    hits = sum(p and pair.duplicate for p, pair in zip(predicted, pairs, strict=True))
    said = sum(predicted)
    actual = sum(pair.duplicate for pair in pairs)
    return {
        f"{prefix}_precision": round(hits / said, 3) if said else 1.0,
        f"{prefix}_recall": round(hits / actual, 3) if actual else 1.0,
        f"{prefix}_merged_lookalikes": said - hits,
    }


def render_pairs(table: list[dict[str, Any]]) -> str:
    head = "threshold  rule P  rule R  look-alikes merged | cosine P  cosine R  look-alikes merged"
    lines = [head]
    for r in table:
        lines.append(
            f"{r['threshold']:9.2f}  {r['rule_precision']:6.3f}  {r['rule_recall']:6.3f}  "
            f"{r['rule_merged_lookalikes']:18d} | {r['cosine_precision']:8.3f}  "
            f"{r['cosine_recall']:8.3f}  {r['cosine_merged_lookalikes']:18d}"
        )
    return "\n".join(lines)
