"""Summaries for compacted working memory: extractive by default, an LLM when configured.

The default, :class:`ExtractiveSummariser`, needs no model and no network, and gives the same
output for the same messages on every machine:

1. The messages' contents are split into sentences (after ``.``, ``!`` or ``?`` followed by
   white space, and at line breaks).
2. Each content word (letters only, at least 3 long, not a stop word, case-folded) is counted
   over all the sentences: its term frequency.
3. A sentence scores the sum of the frequencies of its distinct content words, divided by the
   square root of its number of content words (so long sentences do not win by length alone).
4. Sentences scoring at least half the best score are taken best first (ties: the earlier
   one) while they fit in :data:`MAX_SUMMARY_CHARS`, skipping near repeats: a sentence
   sharing at least 70% of its content words with one already taken (Jaccard overlap). The
   chosen sentences are joined in their original order.
   If even the best sentence is too long, it is cut at a word boundary and ends with "…".

Entities come from :func:`extract_entities` (rules in its docstring), in order of first
appearance, at most :data:`MAX_ENTITIES`.

The optional :class:`LLMSummariser` asks an OpenAI-compatible ``/chat/completions`` endpoint
(settings ``memory.llm``) through node/absorb/chat_endpoint.py. It is never required:
on any failure it returns the extractive summary instead, and entities always come from the
deterministic extractor.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from feral.node.absorb.chat_endpoint import ChatEndpoint, ChatFailed, Opener
from feral.node.settings.config import LLMSettings, MemorySettings
from feral.storage.search import query as search

from .working_memory import Message

if TYPE_CHECKING:  # urllib's HTTP stack: only a node with an LLM endpoint configured
    import urllib.request

__all__ = [
    "MAX_ENTITIES",
    "MAX_SUMMARY_CHARS",
    "ExtractiveSummariser",
    "LLMSummariser",
    "Summariser",
    "Summary",
    "extract_entities",
    "split_sentences",
    "summariser_for",
]

logger = logging.getLogger(__name__)

MAX_SUMMARY_CHARS = 600
REPEAT_OVERLAP = 0.7
MIN_SCORE_FRACTION = 0.5
MAX_ENTITIES = 20
MAX_ENTITY_CHARS = 80
LLM_TIMEOUT_S = 30.0

_ABBREVIATIONS = ("Dr", "Mr", "Mrs", "Ms", "Mx", "Prof", "St", "e.g", "i.e", "vs", "etc")
_SENTENCE_END = re.compile(
    "".join(rf"(?<!\b{re.escape(a)}\.)" for a in _ABBREVIATIONS)
    + r"(?<!\b[A-Z]\.)(?<=[.!?])\s+|\n+"
)
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
STOP_WORDS = search.STOP_WORDS | frozenset(
    """against also because let yes okay ok thanks thank please sure well like get got one
    yesterday today tomorrow tonight hi hello hey dear maybe however""".split()
)
"""The query's stop words (storage/search/query.py) plus the filler of chat, which says nothing
about what an episode is about."""


@dataclass(frozen=True)
class Summary:
    """What becomes an episode: the summary text and the entities it mentions."""

    text: str
    entities: tuple[str, ...]


class Summariser(Protocol):
    """Turns compacted messages into a :class:`Summary` (may block; callers use a thread)."""

    def summarise(self, messages: Sequence[Message]) -> Summary: ...


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``, white space collapsed, empty ones dropped."""
    parts = (" ".join(part.split()) for part in _SENTENCE_END.split(text))
    return [part for part in parts if part]


def _content_words(sentence: str) -> list[str]:
    words = (w.casefold() for w in _WORD.findall(sentence))
    return [w for w in words if len(w) >= 3 and w not in STOP_WORDS]


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip() + "…"


def _similar(first: list[str], second: list[str]) -> bool:
    """Near repeats: at least :data:`REPEAT_OVERLAP` of their content words shared (Jaccard)."""
    a, b = set(first), set(second)
    if not a or not b:
        return a == b
    return len(a & b) >= REPEAT_OVERLAP * len(a | b)


def extractive_summary(texts: Sequence[str], limit: int = MAX_SUMMARY_CHARS) -> str:
    """The most informative sentences of ``texts``, in order, within ``limit`` characters."""
    sentences = [s for text in texts for s in split_sentences(text)]
    if not sentences:
        return ""
    words = [_content_words(s) for s in sentences]
    frequency = Counter(w for ws in words for w in ws)
    scores = [
        sum(frequency[w] for w in set(ws)) / math.sqrt(len(ws)) if ws else 0.0 for ws in words
    ]
    ranked = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
    floor = MIN_SCORE_FRACTION * scores[ranked[0]]
    chosen: list[int] = []
    used = 0
    for index in ranked:
        cost = len(sentences[index]) + (1 if chosen else 0)
        if scores[index] < floor:
            break
        if used + cost > limit or any(_similar(words[index], words[i]) for i in chosen):
            continue
        chosen.append(index)
        used += cost
    if not chosen:
        return _cut(sentences[ranked[0]], limit)
    return " ".join(sentences[i] for i in sorted(chosen))


_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December"
    "|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
_WEEKDAYS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday".split() + _MONTHS.lower().split("|")
)
_DATE = re.compile(
    rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b"
    rf"|\b(?:{_MONTHS})\.? \d{{1,2}}(?:st|nd|rd|th)?(?:, \d{{4}})?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)? (?:{_MONTHS})\b(?: \d{{4}})?"
)
_HANDLE = re.compile(r"(?<![\w@.])@[A-Za-z0-9_]{1,30}\b")
_TOKEN = re.compile(r"\S+")
_TITLES = frozenset({"Dr.", "Mr.", "Mrs.", "Ms.", "Mx.", "Prof.", "St."})
_PARTICLES = frozenset("of de da do dos das di del van von der la le du".split())
_OPENING = "\"'“‘([{"
_CLOSING = ".,;:!?)]}\"'”’…"


def extract_entities(texts: Sequence[str], limit: int = MAX_ENTITIES) -> tuple[str, ...]:
    """Names, handles and dates in ``texts``, in order of first appearance, deduplicated.

    The rules, applied sentence by sentence:

    * dates: ISO ``2024-05-04``; a month name or abbreviation with a day (``May 4``,
      ``May 4th, 2024``, ``4 May``);
    * handles: ``@`` followed by 1-30 letters, digits or underscores (not inside an e-mail
      address);
    * names: a run of capitalised words (``Alice Smith``, ``New York``), optionally after a
      title (``Dr.``, ``Mr.``, ``Mrs.``, ``Ms.``, ``Mx.``, ``Prof.``, ``St.``), which may
      hold the particles ``of de da do dos das di del van von der la le du`` between
      capitalised words (``Bank of America``). Punctuation after a word, or a possessive
      ``'s``, ends the run.
      Stop words (``The``, ``I``, ``We``, ``Yesterday``, ``Hi``...), weekdays and month names
      are dropped from either end of a run. A single capitalised word counts only when it
      does not open its sentence, so "Alice called" gives nothing but "I called Alice" does.

    Repeats are dropped case-insensitively (the first spelling is kept); an entity longer than
    ``MAX_ENTITY_CHARS`` characters is skipped.
    """
    found: dict[str, str] = {}
    for text in texts:
        for sentence in split_sentences(text):
            for entity in _entities_in(sentence):
                if len(entity) <= MAX_ENTITY_CHARS:
                    found.setdefault(entity.casefold(), entity)
                if len(found) >= limit:
                    return tuple(found.values())
    return tuple(found.values())


def _entities_in(sentence: str) -> list[str]:
    spans = [(m.start(), m.group()) for p in (_DATE, _HANDLE) for m in p.finditer(sentence)]
    spans.extend(_names_in(sentence))
    return [text for _, text in sorted(spans)]


def _names_in(sentence: str) -> list[tuple[int, str]]:
    """Runs of capitalised words with their offsets (see :func:`extract_entities`)."""
    names: list[tuple[int, str]] = []
    run: list[str] = []
    start = 0

    def close() -> None:
        name = _clean_name(run, opens_sentence=start == 0)
        if name:
            names.append((start, name))
        run.clear()

    for match in _TOKEN.finditer(sentence):
        raw = match.group().lstrip(_OPENING)
        if raw.rstrip(",;:") in _TITLES:
            close()
            run.append(raw.rstrip(",;:"))
            start = match.start()
            continue
        word = raw.rstrip(_CLOSING)
        ends = word != raw
        if word.endswith(("'s", "’s")):
            word, ends = word[:-2], True
        capitalised = word[:1].isupper() and word[:1].isalpha()
        if capitalised or (run and word in _PARTICLES):
            if not run:
                start = match.start()
            run.append(word)
        elif run:
            close()
        if ends and run:
            close()
    if run:
        close()
    return names


def _clean_name(words: list[str], *, opens_sentence: bool) -> str | None:
    words = list(words)
    while words and (words[-1] in _PARTICLES or _dropped(words[-1])):
        words.pop()
    while words and _dropped(words[0]):
        words.pop(0)
        opens_sentence = False
    if not words or words == [w for w in words if w in _TITLES]:
        return None
    if len(words) == 1 and (opens_sentence or len(words[0]) < 2):
        return None
    return " ".join(words)


def _dropped(word: str) -> bool:
    folded = word.casefold()
    return folded in STOP_WORDS or folded.rstrip(".") in _WEEKDAYS


class ExtractiveSummariser:
    """The offline, deterministic default (see the module docstring)."""

    def summarise(self, messages: Sequence[Message]) -> Summary:
        texts = [m.content for m in messages]
        text = extractive_summary(texts) or f"{len(messages)} messages without text"
        return Summary(text, extract_entities(texts))


_PROMPT = (
    "Summarise the conversation below for a long-term memory in at most five sentences. "
    "Keep names, dates, decisions and facts about the user. Answer with the summary only."
)


class LLMSummariser:
    """Summaries from an OpenAI-compatible chat endpoint, falling back to extractive ones.

    Args:
        settings: ``memory.llm`` (base URL, model, and the env variable holding the key).
        environ: where the key is read from (the process environment by default).
        opener: sends the request (``urllib.request.build_opener().open`` by default).
        timeout: seconds before giving up on the endpoint.
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        environ: Mapping[str, str] | None = None,
        opener: Opener | None = None,
        timeout: float = LLM_TIMEOUT_S,
    ) -> None:
        self.endpoint = ChatEndpoint(settings, timeout=timeout, environ=environ, opener=opener)
        self.fallback = ExtractiveSummariser()
        self.last_error: str | None = None
        """Why the last call fell back to the extractive summary (``None``: it did not)."""

    def build_request(self, messages: Sequence[Message]) -> urllib.request.Request:
        """The ``POST {base_url}/chat/completions`` request for ``messages``."""
        return self.endpoint.request(_PROMPT, _transcript(messages))

    def summarise(self, messages: Sequence[Message]) -> Summary:
        entities = extract_entities([m.content for m in messages])
        try:
            text = self.endpoint.ask(_PROMPT, _transcript(messages), 1 << 20)
            if not text.strip() or "\x00" in text:
                raise ValueError("the answer holds no summary text")
        except (ChatFailed, ValueError) as exc:
            self.last_error = str(exc)
            logger.debug("! LLM summary failed, using the extractive one: %s", self.last_error)
            return self.fallback.summarise(messages)
        self.last_error = None
        return Summary(_cut(" ".join(text.split()), MAX_SUMMARY_CHARS * 4), entities)


def _transcript(messages: Sequence[Message]) -> str:
    return "\n".join(f"{m.role}: {m.content}" for m in messages)


def summariser_for(
    settings: MemorySettings, environ: Mapping[str, str] | None = None
) -> Summariser:
    """The summariser ``memory.compaction_strategy`` asks for."""
    if settings.compaction_strategy == "llm" and settings.llm is not None:
        return LLMSummariser(settings.llm, environ=environ)
    return ExtractiveSummariser()
