"""``feral memory import|ingest``: memories in bulk, every line checked first (``export``:
cli/memory/export_command.py)."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from feral.cli.context import pass_home, with_node
from feral.cli.output import echo_json, json_option
from feral.node.absorb.absorb_batch import Notice
from feral.node.assistant.chat_export import is_conversation_file
from feral.node.assistant.working_memory import Message, parse_transcript_line
from feral.node.node import Node
from feral.node.secrets.scan import Policy, screen_lines, triple_text
from feral.storage.memory.export_import import import_archived
from feral.sync.errors import InvalidInput

from .chat_ingest import ingest_conversations
from .import_checks import check_import_keys
from .memory_commands import memory
from .secret_options import screened, secrets_option

__all__ = ["EXPORT_KEYS", "ImportLine", "export_row", "parse_import_line"]

NOTE = ("user", "note")


def parse_import_line(line: str, number: int) -> tuple[str, str, str] | None:
    """One import line: plain text (a note) or a JSON object with a triple or a ``fact``.

    A line that is JSON but not an object (``[1, 2]``, ``"text"``, ``42``) is refused, and so
    is an object with a key it does not take: either would otherwise be stored as something
    the user did not mean (issue 15, item 6).
    """
    text = line.strip()
    if not text:
        return None
    if not text.startswith("{"):
        return _unless_json(text, number)
    try:
        item = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise InvalidInput(f"line {number}: invalid JSON: {reason}") from exc
    check_import_keys(item, number)
    if all(isinstance(item.get(k), str) for k in ("subject", "predicate", "object")):
        return (item["subject"], item["predicate"], item["object"])
    if isinstance(item.get("fact"), str) and item["fact"].strip():
        return (*NOTE, item["fact"].strip())
    raise InvalidInput(f"line {number}: expected subject/predicate/object strings or a 'fact'")


def _unless_json(text: str, number: int) -> tuple[str, str, str]:
    """A plain-text line as a note, unless it is a JSON value other than an object."""
    try:
        json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return (*NOTE, text)
    raise InvalidInput(
        f'line {number}: a JSON value that is not an object; write a fact as {{"fact": ...}}'
    )


EXPORT_KEYS = ("table", "hlc", "origin")
"""What marks a line of ``feral memory export``: a row as it was stored, clock fields included."""


def export_row(line: str) -> dict[str, object] | None:
    """The row ``line`` holds if it is a line of an export (classified where it was made, with
    its clock fields), else ``None``: a new line for the pipeline."""
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        item = json.loads(text)
    except json.JSONDecodeError:
        return None
    if isinstance(item, dict) and all(key in item for key in EXPORT_KEYS):
        return item
    return None


@dataclasses.dataclass(frozen=True)
class ImportLine:
    """One line to import: its triple, and how an export held it (``None``: a new line)."""

    triple: tuple[str, str, str]
    exported: str | None = None
    """``"live"`` or ``"archived"`` for a fact of an export."""
    number: int = 0
    """The line's number in the file, from 1."""


def _import_line(line: str, number: int) -> ImportLine | str | None:
    """The line's fact; an export's row of another table (or a tombstone) gives its table's
    name, to be left out and counted."""
    row = export_row(line)
    if row is None:
        triple = parse_import_line(line, number)
        return None if triple is None else ImportLine(triple, number=number)
    if row["table"] != "facts" or row.get("deleted"):
        return str(row["table"]) if not row.get("deleted") else "tombstones"
    subject, predicate, obj = (row.get(key) for key in ("subject", "predicate", "object"))
    if not (isinstance(subject, str) and isinstance(predicate, str) and isinstance(obj, str)):
        raise InvalidInput(f"line {number}: an export's fact without subject/predicate/object")
    return ImportLine((subject, predicate, obj), _exported_state(row), number)


def _exported_state(row: dict[str, object]) -> str:
    return "archived" if row.get("archived") else "live"


def _read_import(path: Path) -> tuple[list[tuple[int, ImportLine]], list[str]]:
    """Every line to import with its number (blank lines left out), and the tables of the
    export rows left out."""
    lines: list[tuple[int, ImportLine]] = []
    left_out: list[str] = []
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                parsed = _import_line(line, number)
                if isinstance(parsed, str):
                    left_out.append(parsed)
                elif parsed is not None:
                    lines.append((number, parsed))
            return lines, left_out
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path} is not UTF-8 text") from exc


@memory.command(name="import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@secrets_option("import")
@click.option(
    "--keep-both",
    is_flag=True,
    help="Write each line even if it would be merged as a duplicate or supersede a stored fact "
    "(linked to it as related).",
)
@json_option("the counts")
@pass_home
def import_(home: Path, file: Path, secrets: Policy, keep_both: bool, as_json: bool) -> None:
    """Remember facts in bulk: one per line, plain text or JSON Lines.

    Each line goes through the absorb pipeline as `remember` does (duplicates merged, a new
    value superseding the old); the fact lines of an export are written as they were, since
    they were classified where they were made.
    Every line is checked before anything is written, so a bad line imports nothing; a line
    holding what looks like a secret is refused the same way, or left out with --secrets skip.
    Each line merged into a stored fact (nothing written) or superseding one (archived) is
    named by its number, with the row; --keep-both writes them beside instead.
    """
    numbered, left_out = _read_import(file)
    kept = screened(*screen_lines(numbered, lambda line: triple_text(line.triple), secrets))
    if left_out:
        click.echo(_left_out_summary(left_out), err=True)
    with click.progressbar(length=len(kept), label="Importing", file=sys.stderr) as bar:
        written, notices = with_node(home, lambda node: _import(node, kept, bar.update, keep_both))
    if as_json:
        echo_json({"lines": len(kept), "new_facts": written, **_notices_json(notices)})
        return
    for notice in notices:
        click.echo(_notice_line(notice), err=True)
    click.echo(f"Imported {len(kept)} line(s): {written} new fact(s)", err=True)


def _notices_json(notices: list[tuple[int, Notice]]) -> dict[str, object]:
    """The lines merged and superseding, by number, for ``import --json``."""
    return {
        "merged": [{"line": line, "into": n.row_id} for line, n in notices if not n.archived],
        "superseded": [
            {"line": line, "id": n.row_id, "archived": list(n.archived)}
            for line, n in notices
            if n.archived
        ],
    }


def _notice_line(numbered: tuple[int, Notice]) -> str:
    line, notice = numbered
    if notice.archived:
        archived = ", ".join(notice.archived)
        return f"line {line}: supersedes {archived} (archived; `feral memory restore ID` undoes it)"
    return f"line {line}: duplicate of {notice.row_id}, nothing written (--keep-both writes it)"


def _left_out_summary(tables: list[str]) -> str:
    counts = ", ".join(f"{n} {t}" for t, n in sorted(Counter(tables).items()))
    return f"left out {len(tables)} export row(s) that are not facts ({counts}): sync brings them"


async def _import(
    node: Node, lines: list[ImportLine], progress: Callable[[int], None], keep: bool
) -> tuple[int, list[tuple[int, Notice]]]:
    """An export's facts as they were (live, then archived), then the new lines through the
    absorb pipeline, compared with all of it: what was written, and each new line merged or
    superseding, by its number."""
    live = [line.triple for line in lines if line.exported == "live"]
    archived = [line.triple for line in lines if line.exported == "archived"]
    new = [line for line in lines if line.exported is None]
    written = await node.import_facts(live, progress=progress, classify=False)
    if archived:
        written += await node.commit(import_archived, archived, now_ms=node.now_ms())
        progress(len(archived))
    absorbed = await node.absorb_facts([n.triple for n in new], progress, keep_both=keep)
    notices = [(new[n.index].number, n) for n in absorbed.notices]
    return written + absorbed.written, notices


def _content(message: Message) -> str:
    return message.content


def _read_transcript(path: Path, skip: frozenset[int] = frozenset()) -> Iterator[Message]:
    """The messages of a JSON Lines transcript, each line checked as it is read (but ``skip``)."""
    for _, message in _numbered_transcript(path, skip):
        yield message


def _numbered_transcript(path: Path, skip: frozenset[int]) -> Iterator[tuple[int, Message]]:
    try:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, 1):
                try:
                    line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
                except UnicodeDecodeError as exc:
                    raise InvalidInput(f"line {number}: not UTF-8 text") from exc
                message = parse_transcript_line(line, number)
                if message is not None and number not in skip:
                    yield number, message
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from exc


@memory.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@json_option("the counts")
@secrets_option("ingest")
@pass_home
def ingest(home: Path, file: Path, as_json: bool, secrets: Policy) -> None:
    """Stream a JSON Lines transcript through working memory into episodes, or a chat export.

    Each line is {"session", "role", "content"}; each session gets its own working memory,
    compacted into an episode whenever it passes the trigger. Every line is checked before
    anything is written, so a bad line ingests nothing. At the end, what is left of each
    session becomes one final episode (working memory lives only as long as this command).
    What the user's messages state by the phrasing rules is also remembered as facts of their
    episode, the facts of one message linked as co_extracted.
    A line holding what looks like a secret is refused the same way, or left out with
    --secrets skip.
    A file that is a JSON list is a chat export of LoCoMo's shape instead (conversations of
    sessions of turns with speaker, dia_id and text): each turn becomes an episode
    "[date] speaker: text" citing its dia_id, unsummarised, and no facts are taken.
    """
    if is_conversation_file(file):
        ingest_conversations(home, file, as_json, secrets)
        return
    # Two passes: check every line (and count them for the bar), then stream. Memory stays flat
    # whatever the file's size; a file edited between the passes can still fail half-way.
    _, skipped = screen_lines(_numbered_transcript(file, frozenset()), _content, secrets)
    screened([], skipped)
    skip = frozenset(skipped)
    total = sum(1 for _ in _read_transcript(file, skip))
    hidden = not sys.stderr.isatty()  # a log or a pipe gets the counts, not a bar
    with click.progressbar(length=total, label="Ingesting", file=sys.stderr, hidden=hidden) as bar:
        result = with_node(
            home, lambda node: node.ingest(_read_transcript(file, skip), progress=bar.update)
        )
    if as_json:
        echo_json(dataclasses.asdict(result))
        return
    click.echo(
        f"Ingested {result.messages} message(s) from {result.sessions} session(s): "
        f"{result.episodes} episode(s), {result.facts} fact(s)"
    )
