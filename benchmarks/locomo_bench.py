"""Recall on real conversations: LoCoMo's questions, each turn one memory, feral beside baselines.

``python -m benchmarks locomo --data PATH_OR_URL`` (benchmarks/conversation_set.py reads it).
LoCoMo itself (snap-research/LoCoMo, ``data/locomo10.json``) is licensed CC BY-NC 4.0 by its
authors: it is never copied into this repository or the package, so bring your own copy.
Without ``--data`` the small synthetic set of our own (``benchmarks/conversations/``) runs.

Each conversation gets a fresh node on a real database file; each of its turns is stored as
an episode ``[date] speaker: text`` (:meth:`~feral.node.node.Node.add_episode`), the queue is
embedded, and each question runs through :meth:`~feral.node.node.Node.search` with ``top_k``
10 and the strategies ``fts``, ``vector`` and ``hybrid`` (the settings' defaults otherwise).
Two baselines run in the same process on the same turns: ``bm25`` is plain SQLite FTS5 with
the porter stemmer, a question's non-stop words OR-ed, ranked by ``bm25()``; ``cosine`` is the
same encoder feral uses, each turn embedded as written, ranked by cosine in numpy.

``--through ingest`` gives feral the same turns another way: each conversation written to a file as
the export holds it and read by ``feral memory ingest``'s code (node/assistant/chat_export.py), each
hit read back as the turn its episode cites; its rows are ``fts via ingest`` and so on. ``--through
both`` runs the two ways side by side on fresh nodes.

Per question, over its evidence turns: ``recall@5`` and ``recall@10`` (the share of its
evidence in the first 5 or 10 results) and ``hit@10`` (1 if any evidence is in the first 10);
averaged per category (benchmarks/conversation_set.py names them) and overall. Conversations
alternate between a tuning split and a held split (:func:`~benchmarks.conversation_set.split_of`):
fusion is chosen on ``tune``; ``held`` is what it is judged on.
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import sqlean

from feral.node.answers import SearchHit
from feral.node.assistant.chat_export import parse_conversation_file, write_turns
from feral.node.node import Node
from feral.node.settings.limits import Strategy
from feral.storage.encoders.embedders import DEFAULT_EMBEDDER, load_embedder
from feral.storage.vectors.vectors import Embedder

from .conversation_set import CATEGORIES, Conversation, Question, Turn, split_of
from .retrieval_bench import open_node
from .retrieval_set import STOP_WORDS

__all__ = [
    "ALL_METHODS",
    "INGEST_METHODS",
    "METHODS",
    "THROUGH",
    "SPLITS",
    "TOP_K",
    "Scored",
    "bm25_rankings",
    "cosine_rankings",
    "render_locomo",
    "run_locomo",
    "score_question",
    "summarise",
]

TOP_K = 10
FERAL_STRATEGIES: tuple[Strategy, ...] = ("fts", "vector", "hybrid")
METHODS = ("bm25", "cosine", *FERAL_STRATEGIES)
"""The table's rows: the two baselines, then feral's strategies."""
VIA_INGEST = " via ingest"
INGEST_METHODS = tuple(f"{strategy}{VIA_INGEST}" for strategy in FERAL_STRATEGIES)
"""feral's strategies on the same turns given to ``feral memory ingest`` as a file."""
ALL_METHODS = (*METHODS, *INGEST_METHODS)
THROUGH = ("turns", "ingest", "both")
SPLITS = ("all", "tune", "held")
EMBED_CHUNK = 256
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

Rankings = list[list[str]]
"""Per question, the ``dia_id`` of each result, best first."""


@dataclass(frozen=True)
class Scored:
    """One question's scores under one method."""

    method: str
    split: str
    category: int
    recall5: float
    recall10: float
    hit10: float


def score_question(ranked: Sequence[str], evidence: Sequence[str]) -> tuple[float, float, float]:
    """``(recall@5, recall@10, hit@10)`` of one ranked list of turn ids."""
    wanted = set(evidence)
    found5 = len(wanted & set(ranked[:5]))
    found10 = len(wanted & set(ranked[:TOP_K]))
    return found5 / len(wanted), found10 / len(wanted), 1.0 if found10 else 0.0


def bm25_rankings(turns: Sequence[Turn], questions: Sequence[Question]) -> Rankings:
    """The plain baseline: FTS5 with the porter stemmer, non-stop words OR-ed, ``bm25()``."""
    conn = sqlean.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE turns USING fts5(text, tokenize='porter unicode61')")
        conn.executemany(
            "INSERT INTO turns(rowid, text) VALUES (?, ?)",
            [(i, t.memory) for i, t in enumerate(turns)],
        )
        rankings: Rankings = []
        for question in questions:
            words = [w.lower() for w in _WORD.findall(question.question)]
            kept = [w for w in words if w not in STOP_WORDS] or words
            if not kept:
                rankings.append([])
                continue
            rowids = conn.execute(
                "SELECT rowid FROM turns WHERE turns MATCH ? ORDER BY bm25(turns) LIMIT ?",
                (" OR ".join(f'"{w}"' for w in kept), TOP_K),
            ).fetchall()
            rankings.append([turns[r[0]].dia_id for r in rowids])
        return rankings
    finally:
        conn.close()


def _unit_matrix(embedder: Embedder, texts: Sequence[str]) -> object:
    import numpy as np

    rows: list[list[float]] = []
    for start in range(0, len(texts), EMBED_CHUNK):
        rows += embedder.embed(list(texts[start : start + EMBED_CHUNK]))
    matrix = np.asarray(rows, dtype=np.float32).reshape(len(texts), embedder.dim)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


def cosine_rankings(
    embedder: Embedder, turns: Sequence[Turn], questions: Sequence[Question]
) -> Rankings:
    """The plain baseline: each turn embedded as written, ranked by cosine (numpy)."""
    import numpy as np

    if not turns or not questions:
        return [[] for _ in questions]
    stored = np.asarray(_unit_matrix(embedder, [t.memory for t in turns]))
    asked = np.asarray(_unit_matrix(embedder, [q.question for q in questions]))
    similarity = asked @ stored.T
    best = np.argsort(-similarity, axis=1, kind="stable")[:, :TOP_K]
    return [[turns[int(i)].dia_id for i in row] for row in best]


Cite = Callable[[SearchHit], str]
"""The ``dia_id`` a search hit stands for."""
Store = Callable[[Node, Conversation, Path], Awaitable[Cite]]
"""Puts a conversation's turns into a node one way; answers how to read a hit back."""


async def _store_turns(node: Node, conversation: Conversation, _: Path) -> Cite:
    """Turn by turn: each turn an episode through :meth:`~feral.node.node.Node.add_episode`."""
    turn_of: dict[str, str] = {}
    for turn in conversation.turns:
        row = await node.add_episode(conversation.sample_id, turn.memory)
        turn_of[str(row["id"])] = turn.dia_id
    return lambda hit: turn_of.get(hit["id"], hit["id"])


async def _store_through_ingest(node: Node, conversation: Conversation, home: Path) -> Cite:
    """Through ``feral memory ingest``'s code: the conversation written to a file as the user's
    export holds it, read and checked, each turn an episode that cites its ``dia_id``."""
    export = home / "conversation.json"
    export.write_text(json.dumps([conversation.source]), encoding="utf-8")
    await write_turns(node.add_episode, parse_conversation_file(export))
    return _cited_turn


def _cited_turn(hit: SearchHit) -> str:
    """The turn an ingested episode cites: the first of its entities."""
    row: Mapping[str, object] = hit["row"]
    entities = row.get("entities", [])
    if isinstance(entities, str):
        entities = json.loads(entities)
    if isinstance(entities, list) and entities:
        return str(entities[0])
    return hit["id"]


async def _feral_rankings(
    home: Path, conversation: Conversation, store: Store
) -> dict[str, Rankings]:
    """Store every turn one way, embed them, and ask each question with each strategy."""
    node = await open_node(home, DEFAULT_EMBEDDER)
    try:
        cite = await store(node, conversation, home)
        await node.embed_queued()  # embedding runs off the write path: score the settled store
        rankings: dict[str, Rankings] = {}
        for strategy in FERAL_STRATEGIES:
            rankings[strategy] = []
            for question in conversation.questions:
                result = await node.search(question.question, top_k=TOP_K, strategy=strategy)
                rankings[strategy].append([cite(hit) for hit in result.results])
        return rankings
    finally:
        await node.close()


async def _conversation(
    root: Path, index: int, conversation: Conversation, embedder: Embedder, through: str
) -> list[Scored]:
    rankings: dict[str, Rankings] = {}
    if through in ("turns", "both"):
        home = root / f"conversation-{index}"
        rankings |= await _feral_rankings(home, conversation, _store_turns)
    if through in ("ingest", "both"):
        home = root / f"conversation-{index}-ingest"
        ingested = await _feral_rankings(home, conversation, _store_through_ingest)
        rankings |= {f"{strategy}{VIA_INGEST}": ranked for strategy, ranked in ingested.items()}
    turns, questions = conversation.turns, conversation.questions
    rankings["bm25"] = bm25_rankings(turns, questions)
    rankings["cosine"] = cosine_rankings(embedder, turns, questions)
    split = split_of(index)
    return [
        Scored(method, split, q.category, *score_question(ranked, q.evidence))
        for method in ALL_METHODS
        if method in rankings
        for q, ranked in zip(questions, rankings[method], strict=True)
    ]


def run_locomo(
    conversations: Sequence[Conversation],
    progress: Callable[[str], None] = lambda _: None,
    through: str = "turns",
) -> list[Scored]:
    """Every conversation through every method; one :class:`Scored` per question and method.

    ``through`` is how feral is given the turns: ``"turns"`` (one ``add_episode`` each),
    ``"ingest"`` (``feral memory ingest``'s code on the conversation as a file), or ``"both"``.
    """
    if through not in THROUGH:
        raise ValueError(f"through must be one of {', '.join(THROUGH)}")
    embedder = load_embedder(DEFAULT_EMBEDDER)
    assert embedder is not None  # the default is a model, never "none"
    scored: list[Scored] = []
    with tempfile.TemporaryDirectory(prefix="locomo-") as tmp:
        for index, conversation in enumerate(conversations):
            progress(
                f"conversation {conversation.sample_id}: {len(conversation.turns)} turns, "
                f"{len(conversation.questions)} questions"
            )
            scored += asyncio.run(_conversation(Path(tmp), index, conversation, embedder, through))
    return scored


def summarise(scored: Sequence[Scored], split: str = "all") -> dict[str, dict[str, list[float]]]:
    """``{method: {category name or "overall": [recall@5, recall@10, hit@10, questions]}}``
    over the questions of ``split`` (``"all"``, ``"tune"`` or ``"held"``)."""
    table: dict[str, dict[str, list[float]]] = {}
    for method in _methods(scored):
        mine = [s for s in scored if s.method == method and split in ("all", s.split)]
        groups = {name: [s for s in mine if s.category == n] for n, name in CATEGORIES.items()}
        groups["overall"] = mine
        table[method] = {name: _means(group) for name, group in groups.items()}
    return table


def _methods(scored: Sequence[Scored]) -> list[str]:
    """The methods ``scored`` holds, in the table's order."""
    present = {s.method for s in scored}
    return [method for method in ALL_METHODS if method in present]


def _means(group: Sequence[Scored]) -> list[float]:
    count = len(group)
    if not count:
        return [0.0, 0.0, 0.0, 0.0]
    return [
        sum(s.recall5 for s in group) / count,
        sum(s.recall10 for s in group) / count,
        sum(s.hit10 for s in group) / count,
        float(count),
    ]


def render_locomo(scored: Sequence[Scored], split: str = "all") -> str:
    """A Markdown table: one row per method, ``R@5 / R@10 / hit@10`` per category."""
    table = summarise(scored, split)
    columns = [*CATEGORIES.values(), "overall"]
    counts = {c: int(table[METHODS[0]][c][3]) for c in columns}
    head = "| method | " + " | ".join(f"{c} ({counts[c]})" for c in columns) + " |"
    lines = [f"split: {split}", "", head, "|" + "---|" * (len(columns) + 1)]
    for method in table:
        cells = ["{:.2f} / {:.2f} / {:.2f}".format(*table[method][c][:3]) for c in columns]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
