"""Conversations with questions whose answers are known turns: LoCoMo's shape, read from a file.

LoCoMo (Maharana et al., ACL 2024, https://github.com/snap-research/LoCoMo, ``data/locomo10.json``)
is ten long conversations between two people over many sessions, each with questions annotated
with the dialogue turns that hold their answer (``evidence``). Its licence is CC BY-NC 4.0
(attribution, non-commercial): it is not part of this repository or of the package; the user
gives a path or a URL to a copy at benchmark time. A small set of our own in the same shape,
written for this project, lives in ``benchmarks/conversations/`` and runs in the tests.

The shape, per conversation: ``sample_id``; ``conversation`` with ``speaker_a``,
``speaker_b``, and ``session_N`` (a list of turns ``{"speaker", "dia_id", "text"}``) beside
``session_N_date_time``; ``qa``, a list of ``{"question", "category", "evidence"}``.

The question categories are numbered as LoCoMo's evaluation code treats them
(``task_eval/evaluation.py``: 1 is scored by sub-answers, 5 by refusal): 1 multi-hop,
2 temporal, 3 open-domain, 4 single-hop, 5 adversarial. Adversarial questions ask about what
was never said, so they have no evidence to find and are left out here.
"""

from __future__ import annotations

import json
import re
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CATEGORIES",
    "SYNTHETIC",
    "Conversation",
    "Question",
    "Turn",
    "load_conversations",
    "parse_conversations",
    "split_of",
]

SYNTHETIC = Path(__file__).parent / "conversations" / "synthetic.json"
CATEGORIES: dict[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
"""The categories scored, by LoCoMo's number (5, adversarial, has no evidence to find)."""

_DIA_ID = re.compile(r"D\d+:\d+")
_SESSION = re.compile(r"session_(\d+)")


@dataclass(frozen=True)
class Turn:
    """One thing one person said, in one session of a conversation."""

    dia_id: str
    speaker: str
    date: str
    text: str

    @property
    def memory(self) -> str:
        """The turn as it is remembered: ``[date] speaker: text``."""
        return f"[{self.date}] {self.speaker}: {self.text}"


@dataclass(frozen=True)
class Question:
    """A question and the turns (``dia_id``) that hold its answer."""

    question: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    source: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The conversation as the file holds it: what ``feral memory ingest`` is given."""


def split_of(index: int) -> str:
    """``"tune"`` for the even conversations of a set (fusion is chosen on them), ``"held"``
    for the odd ones (figures reported on them were never looked at while choosing)."""
    return "tune" if index % 2 == 0 else "held"


def _turns(conversation: dict[str, Any]) -> list[Turn]:
    numbers = sorted(
        int(m.group(1))
        for key, value in conversation.items()
        if (m := _SESSION.fullmatch(key)) and isinstance(value, list)
    )
    turns = []
    for number in numbers:
        date = str(conversation.get(f"session_{number}_date_time", ""))
        for turn in conversation[f"session_{number}"]:
            text = str(turn.get("text", "")).strip()
            if text:
                turns.append(Turn(str(turn["dia_id"]), str(turn["speaker"]), date, text))
    return turns


def _questions(qa: list[dict[str, Any]], known: set[str]) -> list[Question]:
    """The scored questions: a known category and at least one evidence turn that exists (a
    few of LoCoMo's evidence lists join two ids in one string, or name a turn not in the
    conversation)."""
    questions = []
    for item in qa:
        category = int(item.get("category", 0))
        ids = _DIA_ID.findall(" ".join(str(e) for e in item.get("evidence", [])))
        evidence = tuple(dict.fromkeys(i for i in ids if i in known))
        if category in CATEGORIES and evidence:
            questions.append(Question(str(item["question"]), category, evidence))
    return questions


def parse_conversations(data: list[dict[str, Any]]) -> list[Conversation]:
    """Conversations from LoCoMo-shaped JSON (already decoded)."""
    conversations = []
    for index, sample in enumerate(data):
        turns = _turns(sample["conversation"])
        known = {t.dia_id for t in turns}
        questions = _questions(sample.get("qa", []), known)
        sample_id = str(sample.get("sample_id", index))
        conversations.append(Conversation(sample_id, tuple(turns), tuple(questions), sample))
    return conversations


def load_conversations(source: str | Path = SYNTHETIC) -> list[Conversation]:
    """Read a LoCoMo-shaped file from a path or an ``http(s)://`` URL."""
    text = str(source)
    if text.startswith(("http://", "https://")):
        with urllib.request.urlopen(text, timeout=60) as response:  # noqa: S310 - user's URL
            data = json.loads(response.read().decode("utf-8"))
    else:
        data = json.loads(Path(text).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{text}: expected a JSON list of conversations")
    return parse_conversations(data)
