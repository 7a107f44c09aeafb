"""Working memory (DESIGN §2): one session's live messages under a token budget, in RAM only.

This module is pure: no I/O, no clock, no storage. :class:`WorkingMemory` decides *when* to compact
and *which* messages go; its caller (:mod:`feral.node.assistant.sessions`) summarises them into an
episode and stores it, so the summary replicates while the buffer itself never leaves the process.

Tokens are counted with a deterministic approximation of a BPE tokenizer (no model needed):

* every run of letters, digits or underscores counts one token per started 4 characters
  ("the" is 1, "memory" 2, "compaction" 3), the usual rule of thumb of about 4 characters
  per token for English;
* every other character that is not white space (punctuation, symbols) counts 1;
* every message costs :data:`MESSAGE_OVERHEAD` (4) more for its role and framing, as chat
  formats spend a few tokens per message.

Compaction: after a message is added, if the buffer holds more than ``trigger × budget`` tokens
(the trigger point), the oldest messages are evicted until the rest, plus one note, fit in
:data:`TARGET_FRACTION` (half) of the trigger point: 3400 tokens with the default 8000 × 0.85.
Measuring the target from the trigger point rather than the budget keeps every compaction a real
one whatever the trigger (with a target of half the budget, a trigger of 0.5 would compact one
message at a time). The evicted messages are returned for summarising, and the note
``[Session compacted — N messages summarized]`` takes their place at the front of the buffer.
The buffer holds at most one note: a later compaction replaces it, and its N counts every
message summarised so far in the session. If a single message is larger than the target it is
evicted too (the buffer is then just the note), so the buffer never stays over the trigger.
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass

from feral.sync.errors import InvalidInput

__all__ = [
    "CHARS_PER_TOKEN",
    "MESSAGE_OVERHEAD",
    "NOTE_ROLE",
    "TARGET_FRACTION",
    "Message",
    "WorkingMemory",
    "compaction_note",
    "count_tokens",
    "message_tokens",
    "parse_transcript_line",
]

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4
TARGET_FRACTION = 0.5
"""Compaction frees the buffer down to this fraction of the trigger point."""
NOTE_ROLE = "system"
MAX_SESSION_BYTES = 256
"""The longest session id an episode can carry (``episodes.session_id``)."""

_PIECE = re.compile(r"(\w+)|\S", re.UNICODE)


def count_tokens(text: str) -> int:
    """The approximate token count of ``text`` (see the module docstring for the rule)."""
    total = 0
    for match in _PIECE.finditer(text):
        word = match.group(1)
        total += -(-len(word) // CHARS_PER_TOKEN) if word else 1
    return total


@dataclass(frozen=True)
class Message:
    """One message of a session."""

    session: str
    role: str
    content: str

    @property
    def tokens(self) -> int:
        return message_tokens(self.content)


def message_tokens(content: str) -> int:
    """What one message costs in the buffer: its content plus the per-message overhead."""
    return count_tokens(content) + MESSAGE_OVERHEAD


def compaction_note(summarised: int) -> str:
    """The note that stands in the buffer for ``summarised`` compacted messages."""
    return f"[Session compacted — {summarised} messages summarized]"


class WorkingMemory:
    """The live messages of one session, compacted when they pass the trigger.

    Args:
        session: the session id.
        budget: the token budget (``memory.working_memory_budget``).
        trigger: the fraction of the budget that starts a compaction (``compaction_trigger``).
    """

    def __init__(self, session: str, budget: int = 8000, trigger: float = 0.85) -> None:
        if budget <= 0 or not 0 < trigger <= 1:
            raise ValueError("budget must be positive and trigger in (0, 1]")
        self.session = session
        self.budget = budget
        self.trigger = trigger
        self.summarised = 0
        """How many messages of this session have been compacted so far."""
        self._messages: deque[Message] = deque()
        self._tokens = 0

    @property
    def threshold(self) -> float:
        """Compaction starts once the buffer holds more tokens than this."""
        return self.trigger * self.budget

    @property
    def target(self) -> int:
        """A compaction evicts until the buffer (note included) holds at most this many."""
        return int(self.threshold * TARGET_FRACTION)

    @property
    def tokens(self) -> int:
        """Tokens in the buffer, the note included."""
        note = message_tokens(compaction_note(self.summarised)) if self.summarised else 0
        return self._tokens + note

    def messages(self) -> list[Message]:
        """The buffer as a model would see it: the note (if any), then the live messages."""
        live = list(self._messages)
        if not self.summarised:
            return live
        return [Message(self.session, NOTE_ROLE, compaction_note(self.summarised)), *live]

    def add(self, role: str, content: str) -> list[Message]:
        """Append a message; returns the messages compacted out of the buffer (often none)."""
        message = Message(self.session, role, content)
        self._messages.append(message)
        self._tokens += message.tokens
        if self.tokens <= self.threshold:
            return []
        return self._evict_to(self.target)

    def flush(self) -> list[Message]:
        """Compact every live message (the end of a transcript); returns them."""
        return self._evict_to(0)

    def _evict_to(self, target: int) -> list[Message]:
        evicted: list[Message] = []
        while self._messages:
            note = message_tokens(compaction_note(self.summarised + len(evicted)))
            if evicted and self._tokens + note <= target:
                break
            oldest = self._messages.popleft()
            self._tokens -= oldest.tokens
            evicted.append(oldest)
        self.summarised += len(evicted)
        return evicted


TRANSCRIPT_ROLES = ("user", "assistant", "system", "tool")
"""The roles a transcript line may have (the chat APIs' four)."""


def parse_transcript_line(line: str, number: int) -> Message | None:
    """One JSON Lines transcript line: ``{"session", "role", "content"}``; blank lines are None.

    Any other key is refused (naming it), as is a role outside :data:`TRANSCRIPT_ROLES`: a
    key or role the ingest would ignore is more likely a mistake than data.

    Raises:
        InvalidInput: ``"line N: ..."`` naming what is wrong.
    """
    text = line.strip()
    if not text:
        return None
    try:
        item = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise InvalidInput(f"line {number}: invalid JSON: {reason}") from exc
    if not isinstance(item, dict):
        raise InvalidInput(f"line {number}: expected a JSON object with session, role and content")
    unknown = sorted(set(item) - {"session", "role", "content"})
    if unknown:
        raise InvalidInput(
            f"line {number}: unknown key {unknown[0]!r}; a line holds session, role and content"
        )
    for key in ("session", "role", "content"):
        if not isinstance(item.get(key), str):
            raise InvalidInput(f"line {number}: {key!r} must be a string")
    session, role, content = item["session"], item["role"], item["content"]
    if not session.strip() or not role.strip():
        raise InvalidInput(f"line {number}: 'session' and 'role' must not be empty")
    if role not in TRANSCRIPT_ROLES:
        raise InvalidInput(
            f"line {number}: role {role!r} is not one of {', '.join(TRANSCRIPT_ROLES)}"
        )
    for key in ("session", "role", "content"):
        _check_text(number, key, item[key])
    if len(session.encode("utf-8")) > MAX_SESSION_BYTES:
        raise InvalidInput(f"line {number}: 'session' must be at most {MAX_SESSION_BYTES} bytes")
    return Message(session, role, content)


def _check_text(number: int, key: str, text: str) -> None:
    """Text a row can hold: no NUL, and no lone surrogate (``"\\ud800"`` is valid JSON)."""
    if "\x00" in text:
        raise InvalidInput(f"line {number}: {key!r} contains a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"line {number}: {key!r} is not valid Unicode") from exc
