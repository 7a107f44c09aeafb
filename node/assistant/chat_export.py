"""A chat export ingested as episodes (``feral memory ingest``): LoCoMo-shaped conversations.

The shape (the one LoCoMo, snap-research/LoCoMo, publishes its conversations in): a JSON list
of conversations, each an object with a ``conversation`` holding ``speaker_a``, ``speaker_b``,
and its sessions ``session_N`` (a list of turns ``{"speaker", "dia_id", "text"}``) each beside
its ``session_N_date_time``; an optional ``sample_id`` names the conversation. Other keys of a
conversation (``qa``, ``observation``, ...) and of a turn (``img_url``, ``blip_caption``, ...)
are left alone; a key in ``conversation`` that is none of those is refused, since it is more
likely a mistake than data. A file is taken as one when its first character that is not white
space is ``[``; a JSON Lines transcript starts with ``{`` (:func:`is_conversation_file`).

Each turn becomes one episode ``[date] speaker: text`` in the session ``ID session_N``, whose
entities are the turn's id first (``D1:3``: the episode cites its turn), then its speaker.
Turns are not summarised: an export is already the record of what was said, and a summary
keeps a few sentences and loses who said the others and when. No facts are taken from them:
the speakers are people talking to each other, and neither is the user stating a fact.
Every turn is checked before anything is written, so a bad file ingests nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from feral.node.secrets.scan import Policy, SecretRefused, find_secret
from feral.storage.db.rows import EpisodeRow
from feral.sync.errors import InvalidInput

from .working_memory import MAX_SESSION_BYTES

__all__ = [
    "ChatTurn",
    "is_conversation_file",
    "parse_conversation_file",
    "screen_turns",
    "write_turns",
]

_SESSION = re.compile(r"session_(\d+)")
_SESSION_DATE = re.compile(r"session_(\d+)_date_time")
_SPEAKERS = ("speaker_a", "speaker_b")
_TURN_KEYS = ("speaker", "dia_id", "text")
READ_AS = "a file starting with '[' is read as a chat export, a JSON list of conversations"
"""Said when the shape is wrong: a transcript whose first line is a JSON list lands here."""

EpisodeWriter = Callable[[str, str, Sequence[str]], Awaitable[EpisodeRow]]
"""``Node.add_episode``-shaped: ``(session_id, text, entities)`` to the stored row."""


@dataclass(frozen=True)
class ChatTurn:
    """One thing one person said, where and when: what one episode holds."""

    session: str
    """``ID session_N``: the conversation and its session."""
    dia_id: str
    speaker: str
    date: str
    text: str

    @property
    def memory(self) -> str:
        """The episode's text: ``[date] speaker: text``."""
        return f"[{self.date}] {self.speaker}: {self.text}"

    @property
    def entities(self) -> tuple[str, str]:
        """The turn's id (the episode cites it), then the speaker."""
        return (self.dia_id, self.speaker)


def is_conversation_file(path: Path) -> bool:
    """Whether ``path`` holds a JSON list (a conversation export) rather than JSON Lines."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from exc
    return head.startswith(b"[")


def parse_conversation_file(path: Path) -> list[ChatTurn]:
    """Every turn of a conversation export, each checked; an empty text is left out.

    Raises:
        InvalidInput: one line naming the conversation, session and turn that is wrong.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path} is not UTF-8 text") from exc
    except (json.JSONDecodeError, RecursionError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise InvalidInput(f"{path}: invalid JSON: {reason} ({READ_AS})") from exc
    if not isinstance(data, list) or not data:
        raise InvalidInput(f"{path}: expected a JSON list of conversations")
    turns = [turn for index, item in enumerate(data, 1) for turn in _conversation(index, item)]
    if not turns:
        raise InvalidInput(f"{path}: no turn with text in any conversation")
    return turns


def _conversation(index: int, item: object) -> list[ChatTurn]:
    where = f"conversation {index}"
    if not isinstance(item, dict) or not isinstance(item.get("conversation"), dict):
        raise InvalidInput(f"{where}: expected an object with a 'conversation' object ({READ_AS})")
    name = item.get("sample_id", str(index))
    if not isinstance(name, str | int) or isinstance(name, bool) or not str(name).strip():
        raise InvalidInput(f"{where}: 'sample_id' must be a string or a number")
    conversation: dict[str, Any] = item["conversation"]
    _check_conversation_keys(where, conversation)
    speakers = {_text(where, key, conversation.get(key)) for key in _SPEAKERS}
    numbers = sorted(int(m.group(1)) for key in conversation if (m := _SESSION.fullmatch(key)))
    turns: list[ChatTurn] = []
    for number in numbers:
        turns += _session(f"{where}, session_{number}", str(name), number, conversation)
    seen: set[str] = set()
    for turn in turns:
        if turn.speaker not in speakers:
            raise InvalidInput(
                f"{where}, turn {turn.dia_id}: speaker {turn.speaker!r} is neither speaker_a "
                "nor speaker_b"
            )
        if turn.dia_id in seen:
            raise InvalidInput(f"{where}: turn id {turn.dia_id!r} is used twice")
        seen.add(turn.dia_id)
    return turns


def _check_conversation_keys(where: str, conversation: dict[str, Any]) -> None:
    for key in conversation:
        if key in _SPEAKERS or _SESSION.fullmatch(key) or _SESSION_DATE.fullmatch(key):
            continue
        raise InvalidInput(
            f"{where}: unknown key {key!r} in 'conversation' (it holds speaker_a, speaker_b, "
            "session_N and session_N_date_time)"
        )


def _session(where: str, name: str, number: int, conversation: dict[str, Any]) -> list[ChatTurn]:
    turns = conversation[f"session_{number}"]
    if not isinstance(turns, list):
        raise InvalidInput(f"{where}: expected a list of turns")
    date_key = f"session_{number}_date_time"
    date = _text(where, date_key, conversation.get(date_key))
    session = f"{name} session_{number}"
    if len(session.encode("utf-8")) > MAX_SESSION_BYTES:
        raise InvalidInput(f"{where}: 'sample_id' must be shorter (a session id holds it)")
    found = []
    for position, turn in enumerate(turns, 1):
        if not isinstance(turn, dict):
            raise InvalidInput(f"{where}, turn {position}: expected an object")
        at = f"{where}, turn {position}"
        speaker, dia_id, text = (
            _text(at, key, turn.get(key), empty=key == "text") for key in _TURN_KEYS
        )
        if text.strip():
            found.append(ChatTurn(session, dia_id, speaker, date, text.strip()))
    return found


def _text(where: str, key: str, value: object, *, empty: bool = False) -> str:
    """A string a row can hold: present, not blank (unless ``empty``), no NUL, valid Unicode."""
    if not isinstance(value, str):
        raise InvalidInput(f"{where}: {key!r} must be a string")
    if not empty and not value.strip():
        raise InvalidInput(f"{where}: {key!r} must not be empty")
    if "\x00" in value:
        raise InvalidInput(f"{where}: {key!r} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"{where}: {key!r} is not valid Unicode") from exc
    return value


def screen_turns(turns: Sequence[ChatTurn], policy: Policy) -> tuple[list[ChatTurn], list[str]]:
    """The turns without those holding what looks like a secret, and where those were.

    Raises:
        SecretRefused: under ``refuse``, at the first one (``turn D1:3 of ID session_1``).
    """
    kept: list[ChatTurn] = []
    skipped: list[str] = []
    for turn in turns:
        found = find_secret(turn.memory)
        where = f"turn {turn.dia_id} of {turn.session}"
        if found is None:
            kept.append(turn)
        elif policy == "refuse":
            advice = "nothing was written; remove it, or pass --secrets skip to leave it out"
            raise SecretRefused(found, where, advice)
        else:
            skipped.append(where)
    return kept, skipped


async def write_turns(
    write_episode: EpisodeWriter,
    turns: Iterable[ChatTurn],
    progress: Callable[[int], None] | None = None,
) -> list[EpisodeRow]:
    """Store each turn as its episode, in order; returns the rows written."""
    rows = []
    for turn in turns:
        rows.append(await write_episode(turn.session, turn.memory, turn.entities))
        if progress is not None:
            progress(1)
    return rows
