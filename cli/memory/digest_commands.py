"""``feral memory digest`` and ``feral memory prompt``: memories shaped for an assistant's prompt
(node/recall/digest.py, node/curation/prompt_files.py)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click

from feral.cli.context import pass_home, with_node
from feral.cli.output import echo_json, json_option
from feral.node.curation.prompt_files import write_prompt_files
from feral.node.recall.digest import DEFAULT_MAX_TOKENS, MAX_MAX_TOKENS, build_digest
from feral.storage.memory.memory_model import DEFAULT_SCOPE

from .scope_option import scope_option

__all__ = ["digest", "prompt"]


def _moment(text: str | None) -> int | None:
    """``--now`` as ms since the epoch: ISO 8601 with a zone (``2026-12-01T15:00:00Z``)."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise click.BadParameter(f"{text!r} is not an ISO 8601 time", param_hint="--now") from exc
    if moment.tzinfo is None:
        raise click.BadParameter("give the zone, e.g. 2026-12-01T15:00:00Z", param_hint="--now")
    return int(moment.timestamp() * 1000)


@click.command()
@click.option("--topic", help="What the conversation is about: its relevant memories come first.")
@click.option(
    "--max-tokens",
    type=click.IntRange(1, MAX_MAX_TOKENS),
    default=DEFAULT_MAX_TOKENS,
    show_default=True,
    help="The block's budget, counted with the model's tokenizer, frame included.",
)
@scope_option("Only memories of this scope (default: every scope)")
@click.option(
    "--now",
    metavar="TIME",
    help="The reference time, ISO 8601 (default: the newest stamp in the store).",
)
@json_option("the block and what went into it")
@pass_home
def digest(
    home: Path,
    topic: str | None,
    max_tokens: int,
    scope: str | None,
    now: str | None,
    as_json: bool,
) -> None:
    """Print a <memory-context> block for a prompt: memories relevant to --topic, open TODOs
    and what was recorded in the last 48 hours, within --max-tokens.

    Example: feral memory digest --topic "trip to Porto" --max-tokens 500

    Two devices that have converged print the same block.
    """
    reference = _moment(now)
    result = with_node(
        home,
        lambda node: build_digest(
            node, topic=topic, max_tokens=max_tokens, scope=scope, now_ms=reference
        ),
    )
    if as_json:
        echo_json(result.as_dict())
    else:
        click.echo(result.text)


@click.command()
@scope_option(f"Whose facts (default {DEFAULT_SCOPE})")
@json_option("the files written")
@pass_home
def prompt(home: Path, scope: str | None, as_json: bool) -> None:
    """Write USER.md (identity, preferences, interests, goals) and MEMORY.md (context,
    standing rules) under HOME/prompt/, each section capped in tokens.

    Example: feral memory prompt && cat ~/.feral/prompt/USER.md
    """
    files = with_node(home, lambda node: write_prompt_files(node, scope=scope or DEFAULT_SCOPE))
    if as_json:
        echo_json([f.as_dict() for f in files])
        return
    for written in files:
        shown = sum(written.shown.values())
        left = sum(written.left_out.values())
        more = f", {left} left out (over a section's cap)" if left else ""
        click.echo(f"Wrote {written.path} ({shown} fact(s){more})")
