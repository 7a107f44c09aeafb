from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from feral.node.assistant.sessions import SessionMemory, ingest
from feral.node.assistant.summarise import ExtractiveSummariser, Summary
from feral.node.assistant.working_memory import (
    MESSAGE_OVERHEAD,
    NOTE_ROLE,
    Message,
    WorkingMemory,
    compaction_note,
    count_tokens,
    message_tokens,
    parse_transcript_line,
)
from feral.node.settings.config import MemorySettings
from feral.sync.errors import InvalidInput

from .transcripts import SESSIONS, transcript

# Counting tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("   \n\t", 0),
        ("the", 1),
        ("memory", 2),
        ("compaction", 3),
        ("the memory, compaction!", 8),
        ("2024-05-04", 5),
        ("snake_case_words", 4),
        ("…", 1),
    ],
)
def test_words_cost_a_token_per_started_four_characters_and_symbols_one_each(text, tokens):
    assert count_tokens(text) == tokens


def test_a_message_costs_its_content_plus_the_per_message_overhead():
    assert message_tokens("") == MESSAGE_OVERHEAD
    assert Message("s", "user", "the memory").tokens == 3 + MESSAGE_OVERHEAD


def test_the_note_names_how_many_messages_were_summarised():
    assert compaction_note(12) == "[Session compacted — 12 messages summarized]"


# Compaction


def fill(memory: WorkingMemory, count: int, words: int = 10) -> list[list[Message]]:
    """Add ``count`` messages of ``words`` three-letter words; returns each add's evictions."""
    return [memory.add("user", " ".join(["abc"] * words) + f" {i}") for i in range(count)]


def test_nothing_is_compacted_until_the_buffer_passes_the_trigger():
    memory = WorkingMemory("s", budget=1000, trigger=0.85)
    per_message = message_tokens(" ".join(["abc"] * 10) + " 0")
    fits = int(memory.threshold // per_message)
    assert fill(memory, fits) == [[]] * fits
    assert memory.tokens == fits * per_message <= memory.threshold
    assert memory.summarised == 0
    assert all(m.role == "user" for m in memory.messages())


def test_passing_the_trigger_compacts_the_oldest_messages_down_to_half_the_trigger_point():
    memory = WorkingMemory("s", budget=1000, trigger=0.85)
    evictions = fill(memory, 60)
    first = next(i for i, evicted in enumerate(evictions) if evicted)
    assert memory.tokens <= memory.threshold
    compacted = evictions[first]
    assert [m.content.split()[-1] for m in compacted] == [str(i) for i in range(len(compacted))]
    assert memory.target == 425


def test_a_compaction_leaves_the_buffer_at_or_under_the_target_with_one_note_first():
    memory = WorkingMemory("s", budget=1000, trigger=0.85)
    for _ in range(200):
        if fill(memory, 1)[0]:
            assert memory.tokens <= memory.target
            note, *rest = memory.messages()
            assert note == Message("s", NOTE_ROLE, compaction_note(memory.summarised))
            assert all(m.role == "user" for m in rest)


def test_the_buffer_never_stays_above_the_trigger():
    memory = WorkingMemory("s", budget=300, trigger=0.6)
    for index in range(500):
        memory.add("user", "word " * (index % 37))
        assert memory.tokens <= memory.threshold


def test_a_low_trigger_still_compacts_many_messages_at_once():
    memory = WorkingMemory("s", budget=1000, trigger=0.3)
    evictions = [e for e in fill(memory, 100) if e]
    assert min(len(e) for e in evictions[1:]) >= 5


def test_the_one_note_counts_every_message_summarised_so_far():
    memory = WorkingMemory("s", budget=400, trigger=0.85)
    evictions = fill(memory, 100)
    compacted = [e for e in evictions if e]
    assert len(compacted) > 2
    assert memory.summarised == sum(len(e) for e in compacted)
    notes = [m for m in memory.messages() if m.role == NOTE_ROLE]
    assert [n.content for n in notes] == [compaction_note(memory.summarised)]


def test_no_message_is_lost_or_reordered_between_episodes_and_the_buffer():
    memory = WorkingMemory("s", budget=400, trigger=0.85)
    evicted = [m for batch in fill(memory, 100) for m in batch]
    live = [m for m in memory.messages() if m.role != NOTE_ROLE]
    assert [int(m.content.split()[-1]) for m in evicted + live] == list(range(100))


def test_a_message_larger_than_the_target_is_compacted_with_the_rest():
    memory = WorkingMemory("s", budget=100, trigger=0.85)
    memory.add("user", "short")
    evicted = memory.add("user", "word " * 200)
    assert [m.content for m in evicted] == ["short", "word " * 200]
    assert [m.content for m in memory.messages()] == [compaction_note(2)]


def test_flush_compacts_every_live_message_and_keeps_the_note():
    memory = WorkingMemory("s", budget=1000)
    fill(memory, 3)
    assert len(memory.flush()) == 3
    assert [m.content for m in memory.messages()] == [compaction_note(3)]
    assert memory.flush() == []


@pytest.mark.parametrize(("budget", "trigger"), [(0, 0.85), (-1, 0.5), (100, 0), (100, 1.5)])
def test_a_budget_or_trigger_out_of_range_is_refused(budget, trigger):
    with pytest.raises(ValueError):
        WorkingMemory("s", budget=budget, trigger=trigger)


# Transcript lines


def test_a_transcript_line_becomes_a_message():
    line = json.dumps({"session": "s1", "role": "user", "content": "hi"})
    assert parse_transcript_line(line, 1) == Message("s1", "user", "hi")


def test_blank_transcript_lines_are_skipped():
    assert parse_transcript_line("  \n", 4) is None


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{nope", "line 7: invalid JSON"),
        ("[1, 2]", "line 7: expected a JSON object"),
        ('{"session": "s", "role": "user"}', "line 7: 'content' must be a string"),
        ('{"session": 1, "role": "user", "content": "x"}', "line 7: 'session' must be a string"),
        ('{"session": " ", "role": "user", "content": "x"}', "line 7: 'session' and 'role'"),
        ('{"session": "s", "role": "", "content": "x"}', "line 7: 'session' and 'role'"),
        ('{"session": "s", "role": "user", "content": "a\\u0000b"}', "line 7: 'content' contains"),
        (
            '{"session": "s", "role": "tool", "content": "\\ud800"}',
            "line 7: 'content' is not valid",
        ),
        (json.dumps({"session": "s" * 257, "role": "user", "content": ""}), "at most 256 bytes"),
        ('{"session": "s", "role": "u", "content": "x"}', "line 7: role 'u' is not one of user,"),
        (json.dumps({"session": "s", "role": "user", "content": "x", "ts": 3}), "unknown key 'ts'"),
        ("[" * 100_000, "line 7: invalid JSON"),
    ],
)
def test_a_bad_transcript_line_is_refused_naming_the_line(line, expected):
    with pytest.raises(InvalidInput) as info:
        parse_transcript_line(line, 7)
    assert expected in str(info.value)


# Sessions: compactions become episodes


class RecordingEpisodes:
    """Stands in for ``Node.add_episode``: records what would be stored."""

    def __init__(self) -> None:
        self.episodes: list[dict[str, Any]] = []

    async def __call__(
        self, session_id: str, summary: str, entities: Sequence[str]
    ) -> dict[str, Any]:
        row = {"session_id": session_id, "summary": summary, "entities": list(entities)}
        self.episodes.append(row)
        return row


def sessions_with(budget: int, trigger: float = 0.85) -> tuple[SessionMemory, RecordingEpisodes]:
    recorder = RecordingEpisodes()
    settings = MemorySettings(working_memory_budget=budget, compaction_trigger=trigger)
    return SessionMemory(settings, ExtractiveSummariser(), recorder), recorder


async def test_each_session_has_its_own_working_memory():
    sessions, recorder = sessions_with(budget=1000)
    await sessions.add("a", "user", "hello there")
    await sessions.add("b", "user", "general kenobi")
    assert sorted(sessions.buffers) == ["a", "b"]
    assert [m.content for m in sessions.buffer("a").messages()] == ["hello there"]
    assert recorder.episodes == []


async def test_a_compaction_stores_one_episode_with_summary_entities_and_session():
    sessions, recorder = sessions_with(budget=200)
    rows = []
    for index in range(20):
        rows += await sessions.add("trip", "user", f"We fly to Porto with Dr. Chen, day {index}.")
    assert rows and rows == recorder.episodes
    first = rows[0]
    assert first["session_id"] == "trip"
    assert "Porto" in first["summary"]
    assert first["entities"] == ["Porto", "Dr. Chen"]


async def test_a_long_transcript_leaves_a_compaction_note_in_each_session():
    sessions, recorder = sessions_with(budget=8000)
    result = await ingest(sessions, transcript(300))
    assert result.messages == 300 and result.sessions == 2
    assert result.episodes == len(recorder.episodes) > 2
    for session in SESSIONS:
        note = sessions.buffer(session).messages()[0]
        assert note.role == NOTE_ROLE
        assert note.content == compaction_note(150)  # all 150, since the end flushes


async def test_ingest_flushes_each_sessions_remainder_into_one_final_episode():
    sessions, recorder = sessions_with(budget=100_000)
    result = await ingest(sessions, transcript(10))
    assert (result.messages, result.episodes) == (10, 2)
    assert sorted(e["session_id"] for e in recorder.episodes) == sorted(SESSIONS)


async def test_ingest_reports_progress_once_per_message():
    sessions, _ = sessions_with(budget=8000)
    ticks: list[int] = []
    await ingest(sessions, transcript(7), progress=ticks.append)
    assert ticks == [1] * 7


async def test_the_summariser_runs_with_the_compacted_messages_in_order():
    seen: list[list[str]] = []

    class RecordingSummariser:
        def summarise(self, messages: Sequence[Message]) -> Summary:
            seen.append([m.content for m in messages])
            return Summary("s", ())

    recorder = RecordingEpisodes()
    sessions = SessionMemory(
        MemorySettings(working_memory_budget=60), RecordingSummariser(), recorder
    )
    for word in ("one", "two", "three", "four", "five", "six", "seven", "eight"):
        await sessions.add("s", "user", f"{word} " * 5)
    await sessions.flush()
    flat = [content.split()[0] for batch in seen for content in batch]
    assert flat == ["one", "two", "three", "four", "five", "six", "seven", "eight"]
