"""Fitting the hybrid's turn reranker (storage/search/rerank.py) on LoCoMo's tuning half.

``python -m benchmarks rerank --data PATH_OR_URL [--write]``. Each conversation of the tuning
half (the even ones, benchmarks/conversation_set.py) is stored turn by turn in a fresh node, as
the conversation benchmark does; each question's hybrid candidates are read as a search reads
them (storage/search/hybrid.py, with the alpha a search without one uses), and each candidate
turn's features (:func:`~feral.storage.search.rerank.turn_features`) are labelled by whether it
is one of the question's evidence turns. The model is linear, fitted listwise: per question, a
softmax over its candidates, whose cross-entropy against the evidence among them (spread evenly)
is minimised with a small L2 penalty by full-batch Adam from zero weights, a fixed number of
steps: no randomness, so the same data give the same weights. Before the fit over every tuning
conversation, a fit leaving each one out scores it (recall@5, recall@10, MRR@10 over the
question's whole evidence, against the fused order): the estimate the held half is not spent on.

``--write`` writes the weights and the features' means over the candidates to
storage/search/rerank_weights.py. The held half (odd conversations) is never read here.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from feral.node.settings.bounds import DEFAULT_ALPHA
from feral.storage.db.connection import Connection
from feral.storage.encoders.embedders import DEFAULT_EMBEDDER
from feral.storage.search import fusion
from feral.storage.search.hybrid import hybrid_candidates
from feral.storage.search.rerank import FEATURES, is_turn, turn_features
from feral.storage.vectors.vectors import pack_vector

from .conversation_set import Conversation, split_of
from .retrieval_bench import open_node

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float64]

__all__ = ["L2", "STEPS", "Question", "collect", "cross_validate", "fit", "render_weights"]

L2 = 0.01
"""The penalty on the weights' squares (0.001 read the same, within 0.003 R@10, left out)."""
STEPS = 400
"""Adam steps of the fit (rate 0.05): the loss no longer moves by then."""
WEIGHTS_FILE = Path(__file__).parent.parent / "storage" / "search" / "rerank_weights.py"


@dataclass(frozen=True)
class Question:
    """One question's candidate turns: their features, best first by the fused score."""

    conversation: str
    rows: list[list[float]]
    evidence: list[bool]
    wanted: int
    """How many evidence turns the question has, found among the candidates or not."""


def _candidates(conn: Connection, text: str, vector: bytes) -> list[tuple[str, list[float]]]:
    """The question's candidate turns, best first by the fused score: id and features."""
    alpha = fusion.alpha_for(text, DEFAULT_ALPHA)
    hits = hybrid_candidates(conn, text, vector, alpha, fusion.FUSION_POOL)
    turns = [h for h in hits if is_turn(h)]
    return [(h.id, row) for h, row in zip(turns, turn_features(text, hits, turns), strict=True)]


async def _conversation(root: Path, index: int, conversation: Conversation) -> list[Question]:
    node = await open_node(root / f"conversation-{index}", DEFAULT_EMBEDDER)
    try:
        row_of: dict[str, str] = {}
        for turn in conversation.turns:
            row_of[turn.dia_id] = str(
                (await node.add_episode(conversation.sample_id, turn.memory))["id"]
            )
        await node.embed_queued()
        embedder = node.embedder
        assert embedder is not None  # the default embedder is a model
        questions = []
        for question in conversation.questions:
            vector = pack_vector(embedder.embed([question.question])[0], embedder.dim)
            found = await node.store.read(_candidates, question.question, vector)
            wanted = {row_of[e] for e in question.evidence}
            rows, evidence = [r for _, r in found], [i in wanted for i, _ in found]
            questions.append(Question(conversation.sample_id, rows, evidence, len(wanted)))
        return questions
    finally:
        await node.close()


def collect(
    conversations: Sequence[Conversation], progress: Callable[[str], None] = lambda _: None
) -> list[Question]:
    """The tuning half's questions with their candidates (the held half is skipped)."""
    found: list[Question] = []
    with tempfile.TemporaryDirectory(prefix="rerank-") as tmp:
        for index, conversation in enumerate(conversations):
            if split_of(index) != "tune":
                continue
            progress(
                f"conversation {conversation.sample_id}: {len(conversation.questions)} questions"
            )
            found += asyncio.run(_conversation(Path(tmp), index, conversation))
    return found


def _arrays(questions: Sequence[Question]) -> list[tuple[Matrix, Matrix]]:
    """Each question with evidence among its candidates: features and evidence as arrays."""
    import numpy as np

    return [
        (np.asarray(q.rows, dtype=np.float64), np.asarray(q.evidence, dtype=np.float64))
        for q in questions
        if any(q.evidence)
    ]


def fit(questions: Sequence[Question], l2: float = L2, steps: int = STEPS) -> list[float]:
    """The weights of :data:`~feral.storage.search.rerank.FEATURES` that best rank each
    question's evidence first (listwise softmax cross-entropy, L2, full-batch Adam)."""
    import numpy as np

    data = _arrays(questions)
    weights = np.zeros(len(FEATURES))
    moment, square = np.zeros_like(weights), np.zeros_like(weights)
    for step in range(1, steps + 1):
        gradient = np.zeros_like(weights)
        for features, evidence in data:
            scores = features @ weights
            chance = np.exp(scores - scores.max())
            chance /= chance.sum()
            gradient += features.T @ (chance - evidence / evidence.sum())
        gradient = gradient / max(len(data), 1) + l2 * weights
        moment = 0.9 * moment + 0.1 * gradient
        square = 0.999 * square + 0.001 * gradient * gradient
        step_size = 0.05 * np.sqrt(1 - 0.999**step) / (1 - 0.9**step)
        weights -= step_size * moment / (np.sqrt(square) + 1e-8)
    return [float(w) for w in weights]


def _order(question: Question, weights: Sequence[float]) -> list[bool]:
    """The question's evidence flags in the order ``weights`` rank its candidates."""
    scored = [sum(w * x for w, x in zip(weights, row, strict=True)) for row in question.rows]
    ranked = sorted(range(len(scored)), key=lambda i: (-scored[i], i))
    return [question.evidence[i] for i in ranked]


def measure(questions: Sequence[Question], weights: Sequence[float]) -> tuple[float, ...]:
    """``(recall@5, recall@10, MRR@10)`` over the questions that have evidence."""
    asked = [q for q in questions if q.wanted]
    totals = [0.0, 0.0, 0.0]
    for question in asked:
        order = _order(question, weights)
        totals[0] += sum(order[:5]) / question.wanted
        totals[1] += sum(order[:10]) / question.wanted
        first = next((i for i, found in enumerate(order[:10], 1) if found), None)
        totals[2] += 1.0 / first if first else 0.0
    return tuple(t / max(len(asked), 1) for t in totals)


def fused_order() -> list[float]:
    """The weights that keep the fused order: all on ``score``."""
    return [1.0 if name == "score" else 0.0 for name in FEATURES]


def cross_validate(questions: Sequence[Question]) -> tuple[float, ...]:
    """Each conversation scored by a fit on the others, averaged over every question."""
    conversations = sorted({q.conversation for q in questions})
    totals, count = [0.0, 0.0, 0.0], 0
    for left_out in conversations:
        weights = fit([q for q in questions if q.conversation != left_out])
        mine = [q for q in questions if q.conversation == left_out and q.wanted]
        scores = measure(mine, weights)
        totals = [t + s * len(mine) for t, s in zip(totals, scores, strict=True)]
        count += len(mine)
    return tuple(t / max(count, 1) for t in totals)


def centres(questions: Sequence[Question]) -> list[float]:
    """Each feature's mean over every candidate turn of ``questions``."""
    rows = [row for q in questions for row in q.rows]
    return [sum(col) / max(len(rows), 1) for col in zip(*rows, strict=True)]


def render_weights(weights: Sequence[float], means: Sequence[float], note: str) -> str:
    """storage/search/rerank_weights.py's text."""
    lines = [
        '"""The turn reranker\'s weights (storage/search/rerank.py), written by',
        "``python -m benchmarks rerank --data PATH --write`` (benchmarks/rerank_fit.py): do not",
        f"edit by hand. {note}",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        '__all__ = ["CENTRES", "WEIGHTS"]',
        "",
        "WEIGHTS: dict[str, float] = {",
        *(f'    "{n}": {w:.6f},' for n, w in zip(FEATURES, weights, strict=True)),
        "}",
        '"""Each feature\'s weight in the linear model."""',
        "CENTRES: dict[str, float] = {",
        *(f'    "{n}": {m:.6f},' for n, m in zip(FEATURES, means, strict=True)),
        "}",
        '"""Each feature\'s mean over the candidate turns the model was fitted on."""',
        "",
    ]
    return "\n".join(lines)


def run_fit(
    conversations: Sequence[Conversation], write: bool, progress: Callable[[str], None]
) -> str:
    """Collect, cross-validate, fit; the report (and the weights file when ``write``)."""
    questions = collect(conversations, progress)
    progress(f"{len(questions)} questions collected; cross-validating")
    held_out = cross_validate(questions)
    weights = fit(questions)
    fitted = measure(questions, weights)
    fused = measure(questions, fused_order())
    note = (
        f"Fitted on {len(questions)} questions of the tuning half's "
        f"{len({q.conversation for q in questions})} conversations."
    )
    if write:
        WEIGHTS_FILE.write_text(render_weights(weights, centres(questions), note), "utf-8")
    lines = [note, "", "| order | R@5 | R@10 | MRR@10 |", "|---|---|---|---|"]
    for label, scores in (
        ("fused (as before)", fused),
        ("reranked, each conversation left out of its fit", held_out),
        ("reranked, fitted on all (in sample)", fitted),
    ):
        lines.append(f"| {label} | " + " | ".join(f"{s:.3f}" for s in scores) + " |")
    lines += ["", "| feature | weight |", "|---|---|"]
    lines += [f"| {n} | {w:+.3f} |" for n, w in zip(FEATURES, weights, strict=True)]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """``python -m benchmarks rerank``: fit the turn reranker, print the report."""
    import argparse
    import sys
    import time

    from .conversation_set import SYNTHETIC, load_conversations

    parser = argparse.ArgumentParser(
        prog="python -m benchmarks rerank",
        description="fit the hybrid's turn reranker on the tuning half of conversations.",
    )
    parser.add_argument("--data", default=str(SYNTHETIC), help="LoCoMo-shaped JSON, path or URL")
    parser.add_argument(
        "--write", action="store_true", help="write storage/search/rerank_weights.py"
    )
    args = parser.parse_args(argv)
    try:
        conversations = load_conversations(args.data)
    except (OSError, ValueError, KeyError) as exc:
        print(f"python -m benchmarks rerank: cannot read {args.data}: {exc}", file=sys.stderr)
        return 1
    started = time.monotonic()
    note = lambda text: print(f"[{time.monotonic() - started:6.1f}s] {text}", file=sys.stderr)  # noqa: E731
    print(run_fit(conversations, args.write, note))
    return 0
