"""Generated conversations for working-memory tests: deterministic, varied, and long."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from feral.node.assistant.working_memory import Message

__all__ = ["SESSIONS", "transcript", "write_transcript"]

SESSIONS = ("kitchen-renovation", "trip-to-porto")

_LINES = {
    "kitchen-renovation": (
        "Alice Smith wants the kitchen cabinets painted sage green before May 4.",
        "The contractor, Bob Jones, quoted 4200 euros for the cabinets and the counter.",
        "Remind me to ask @bob_jones whether the counter is quartz or granite.",
        "We agreed the kitchen work starts on 2024-04-15 and lasts three weeks.",
        "Alice Smith prefers brass handles over black ones for the cabinets.",
        "The plumber needs the sink moved forty centimetres to the left.",
    ),
    "trip-to-porto": (
        "We fly to Porto on June 12th, 2024 and stay at the Casa do Rio.",
        "Dr. Chen said the vaccination is not needed for Portugal.",
        "Book a table at the restaurant Cantinho do Avillez for the second night.",
        "The train from Porto to Lisbon takes about three hours.",
        "Pack the rain jackets, because Porto in June can still be wet.",
        "Ask @maria_porto for the best port cellars in Vila Nova de Gaia.",
    ),
}


def transcript(count: int = 300) -> Iterator[Message]:
    """``count`` messages alternating between two sessions and between user and assistant."""
    for index in range(count):
        session = SESSIONS[index % 2]
        lines = _LINES[session]
        turn = index // 2
        role = "user" if turn % 2 == 0 else "assistant"
        picked = [lines[(turn + k) % len(lines)] for k in range(3 + turn % 3)]
        yield Message(session, role, " ".join(picked))


def write_transcript(path: Path, count: int = 300) -> list[Message]:
    """Write :func:`transcript` as JSON Lines to ``path``; returns the messages."""
    messages = list(transcript(count))
    lines = [
        json.dumps({"session": m.session, "role": m.role, "content": m.content}) + "\n"
        for m in messages
    ]
    path.write_text("".join(lines), encoding="utf-8")
    return messages
