"""An optional LLM classifier for absorb: never needed, off by default, the rules behind it.

With ``memory.classifier: "llm"`` (and ``memory.llm``, the OpenAI-compatible endpoint the summaries
use), :func:`~feral.node.absorb.pipeline.absorb` asks the endpoint how a new fact relates to the
stored ones it would compare it with; the offline rules (node/absorb/classify.py) stay the default
and the fallback. The request and the answer are pure functions (:func:`build_request`,
:func:`parse_answer`), so they are tested without any endpoint; :class:`LLMClassifier` sends one
request through node/absorb/chat_endpoint.py, the client the summaries use too.

What the model may decide is held to what the rules could have written:

- it is asked only when the rules see something to compare (an exact repeat, or no stored fact
  near the new one at all, is decided by the rules without a call);
- it sees the new fact and the candidates as numbered lines (ids never leave the device), and
  must answer one JSON object ``{"classification": "new|duplicate|supersede|contradict|related",
  "targets": [numbers]}``;
- ``duplicate`` names exactly one candidate; ``supersede`` only candidates with the new fact's
  subject (an archive the model invents elsewhere would hide a memory); ``related`` at most
  :data:`~feral.node.absorb.classify.MAX_RELATED`; ``new`` none.

Anything else (an error, a timeout, no key, an answer that is not that object) falls back to the
rules with one line in the log, and so does a decision whose candidates changed between the
question and the write (absorb asks outside the write transaction, never inside it).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from feral.node.settings.config import LLMSettings, MemorySettings
from feral.storage.absorb.absorb_store import Candidates, Decision
from feral.storage.memory.memories import Row
from feral.sync.ids import normalise

from .chat_endpoint import ChatEndpoint, ChatFailed, Opener, answer_text, chat_request
from .classify import MAX_RELATED, fact_text

if TYPE_CHECKING:
    import urllib.request  # with http.client and the email parser: only when an LLM is set

__all__ = [
    "CLASSIFY_TIMEOUT_S",
    "LLMClassifier",
    "build_request",
    "candidate_rows",
    "llm_classifier_for",
    "needs_asking",
    "parse_answer",
    "same_candidates",
]

log = logging.getLogger("feral.classify")

CLASSIFY_TIMEOUT_S = 10.0
"""How long ``remember`` waits for the endpoint before the rules decide."""
MAX_ANSWER_BYTES = 1 << 16

_PROMPT = (
    "You classify a new fact for a personal memory against stored facts. Answer with one JSON "
    'object only: {"classification": C, "targets": [N, ...]} where C is "new" (unrelated), '
    '"duplicate" (says the same as stored fact N; one target), "supersede" (a new value of '
    'the same single-valued attribute of the same subject, replacing N), "contradict" (says '
    'the opposite of N; both stay), or "related" (about the same thing as N, at most 3). '
    "Different names, dates or numbers are different facts, never duplicates."
)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def candidate_rows(candidates: Candidates) -> list[Row]:
    """The stored facts the model is shown, once each: the slot's, the opposite, neighbours."""
    rows: dict[str, Row] = {}
    for row in [*candidates.slot, candidates.opposite, *(r for r, _ in candidates.neighbours)]:
        if row is not None:
            rows.setdefault(str(row["id"]), row)
    return list(rows.values())


def needs_asking(candidates: Candidates) -> bool:
    """Whether the model has anything to judge: not an exact live repeat, and something near."""
    exact = candidates.exact
    if exact is not None and not exact["archived"] and not exact["deleted"]:
        return False
    return bool(candidate_rows(candidates))


def _line(row: Row) -> str:
    return fact_text(str(row["subject"]), str(row["predicate"]), str(row["object"]))


def build_request(
    settings: LLMSettings, candidates: Candidates, environ: Mapping[str, str]
) -> urllib.request.Request:
    """The ``POST {base_url}/chat/completions`` asking how the new fact relates to the stored.

    Raises:
        LookupError: ``api_key_env`` names a variable that is not set.
    """
    return chat_request(settings, _PROMPT, _question(candidates), environ)


def _question(candidates: Candidates) -> str:
    stored = "\n".join(f"{n}. {_line(row)}" for n, row in enumerate(candidate_rows(candidates), 1))
    return f"New fact: {fact_text(*candidates.triple)}\nStored facts:\n{stored}"


def parse_answer(payload: bytes, candidates: Candidates) -> Decision:
    """The decision in a chat-completions answer, held to what the rules could write.

    Raises:
        ValueError: anything that is not such an answer (the caller falls back to the rules).
    """
    return parse_verdict(answer_text(payload), candidates)


def parse_verdict(content: str, candidates: Candidates) -> Decision:
    """The decision in the answer's text (the JSON object asked for, fenced or not).

    Raises:
        ValueError: not that object, or a decision the rules could not have written.
    """
    try:
        verdict = json.loads(_FENCE.sub("", content.strip()))
        classification, numbers = verdict["classification"], verdict.get("targets", [])
    except (LookupError, TypeError, AttributeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not the JSON object asked for: {exc}") from exc
    rows = candidate_rows(candidates)
    if not isinstance(numbers, list) or not all(
        type(n) is int and 1 <= n <= len(rows) for n in numbers
    ):
        raise ValueError("targets must be numbers of the stored facts shown")
    targets = tuple(dict.fromkeys(str(rows[n - 1]["id"]) for n in numbers))
    return _decision(str(classification), targets, rows, candidates)


def _decision(
    classification: str, targets: tuple[str, ...], rows: list[Row], candidates: Candidates
) -> Decision:
    subjects = {str(r["id"]): normalise(str(r["subject"])) for r in rows}
    if classification == "new" and not targets:
        return Decision("new")
    if classification == "duplicate" and len(targets) == 1:
        return Decision("duplicate", duplicate_of=targets[0])
    if classification == "supersede" and targets:
        if all(subjects[t] == normalise(candidates.triple[0]) for t in targets):
            return Decision("supersede", supersedes=tuple(sorted(targets)))
    if classification == "contradict" and targets:
        return Decision("contradict", contradicts=targets)
    if classification == "related" and 0 < len(targets) <= MAX_RELATED:
        return Decision("related", related=targets)
    raise ValueError(f"{classification!r} with {len(targets)} target(s) is not a decision")


def same_candidates(asked: Candidates, found: Candidates) -> bool:
    """Whether the write found what the model was asked about (the same rows, unchanged)."""
    return (asked.exact, candidate_rows(asked)) == (found.exact, candidate_rows(found))


class LLMClassifier:
    """Asks ``memory.llm``'s endpoint; ``None`` (and one log line) means: let the rules decide.

    ``opener`` and ``environ`` are for tests; ``timeout`` is seconds before giving up.
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        environ: Mapping[str, str] | None = None,
        opener: Opener | None = None,
        timeout: float = CLASSIFY_TIMEOUT_S,
    ) -> None:
        self.endpoint = ChatEndpoint(settings, timeout=timeout, environ=environ, opener=opener)

    def classify(self, candidates: Candidates) -> Decision | None:
        """The model's decision, or ``None`` when the rules must decide (blocks: run it on a
        worker thread, never inside a transaction)."""
        if not needs_asking(candidates):
            return None
        try:
            content = self.endpoint.ask(_PROMPT, _question(candidates), MAX_ANSWER_BYTES)
            return parse_verdict(content, candidates)
        except (ChatFailed, ValueError) as exc:
            reason = " ".join(str(exc).split())[:200]
            log.warning("! the LLM classifier failed, the rules decide: %s", reason)
            return None


def llm_classifier_for(
    settings: MemorySettings, environ: Mapping[str, str] | None = None
) -> LLMClassifier | None:
    """The classifier ``memory.classifier`` asks for: ``None`` for the rules (the default)."""
    if settings.classifier == "llm" and settings.llm is not None:
        return LLMClassifier(settings.llm, environ=environ)
    return None
