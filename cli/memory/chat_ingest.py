"""``feral memory ingest`` of a chat export: a LoCoMo-shaped conversation file, turn by turn.

The file is read and every turn checked (node/assistant/chat_export.py) before anything is written;
each turn then becomes one episode citing it, so who said what and when stays searchable.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path

import click

from feral.cli.context import with_node
from feral.cli.output import echo_json
from feral.node.assistant.chat_export import (
    ChatTurn,
    parse_conversation_file,
    screen_turns,
    write_turns,
)
from feral.node.assistant.sessions import IngestResult
from feral.node.node import Node
from feral.node.secrets.scan import Policy

__all__ = ["ingest_conversations"]

SHOWN = 20
"""How many turns left out for a secret are named (the rest are counted)."""


def ingest_conversations(home: Path, file: Path, as_json: bool, secrets: Policy) -> None:
    """Every turn of ``file`` as its episode; the counts on stdout as ``ingest`` prints them."""
    turns, skipped = screen_turns(parse_conversation_file(file), secrets)
    if skipped:
        more = f" and {len(skipped) - SHOWN} more" if len(skipped) > SHOWN else ""
        click.echo(
            f"skipped {len(skipped)} turn(s) holding what looks like a secret: "
            f"{', '.join(skipped[:SHOWN])}{more}",
            err=True,
        )
    hidden = not sys.stderr.isatty()
    with click.progressbar(
        length=len(turns), label="Ingesting", file=sys.stderr, hidden=hidden
    ) as bar:
        result = with_node(home, lambda node: _write(node, turns, bar.update))
    if as_json:
        echo_json(dataclasses.asdict(result))
        return
    click.echo(
        f"Ingested {result.messages} turn(s) from {result.sessions} session(s): "
        f"{result.episodes} episode(s), {result.facts} fact(s)"
    )


async def _write(
    node: Node, turns: list[ChatTurn], progress: Callable[[int], None]
) -> IngestResult:
    rows = await write_turns(node.add_episode, turns, progress)
    return IngestResult(len(turns), len(rows), len({turn.session for turn in turns}))
