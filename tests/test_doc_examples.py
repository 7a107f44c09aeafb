"""Every shell example in the README, docs/ and benchmarks/README.md is run by a test, or says
in the doc why not (issue 26, item 6).

The line before each ``sh`` block is a comment the reader does not see:
``<!-- example: run here -->`` (this file runs each line in a fresh home and requires exit 0),
``<!-- example: run by PATH, PATH -->`` (the tests or scripts named run it), or
``<!-- example: not run: REASON -->`` (a second machine, a printed link, a whole install).

The commands docs/CLI.md, OPERATIONS.md and MEMORY.md show inline (in tables and prose) are
checked too: each names a command that exists and only options it takes (so are the options
each row of the command table names), and each that can run as written (no placeholder, not a
server) runs in a fresh home and exits 0.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import click
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from feral.cli.main import cli
from feral.storage.encoders.embedders import STATIC_EMBEDDER

from .cli.helpers import feral, feral_command, set_embedder

ROOT = Path(__file__).resolve().parent.parent
DOCS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "benchmarks" / "README.md",
]
MARKER = re.compile(r"<!-- example: (run here|run by (?P<paths>[^>]+?)|not run: (?P<why>.+?)) -->")


def shell_examples(text: str) -> list[tuple[str, list[str]]]:
    """``(the marker line before it, its command lines)`` for each ``sh`` block."""
    examples = []
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if line.strip() == "```sh":
            end = lines.index("```", number + 1)
            before = next((p for p in reversed(lines[:number]) if p.strip()), "")
            commands = [c.split(" #")[0].strip() for c in lines[number + 1 : end]]
            examples.append((before.strip(), [c for c in commands if c and not c.startswith("#")]))
    return examples


def all_examples() -> list[tuple[str, str, list[str]]]:
    return [
        (str(doc.relative_to(ROOT)), marker, commands)
        for doc in DOCS
        for marker, commands in shell_examples(doc.read_text(encoding="utf-8"))
    ]


def test_the_docs_have_shell_examples_run_here_and_elsewhere() -> None:
    markers = [marker for _, marker, _ in all_examples()]
    assert "<!-- example: run here -->" in markers
    assert any(marker.startswith("<!-- example: run by ") for marker in markers)


@pytest.mark.parametrize(("doc", "marker", "commands"), all_examples())
def test_each_shell_example_says_who_runs_it(doc: str, marker: str, commands: list[str]) -> None:
    found = MARKER.fullmatch(marker)
    assert found, f"{doc}: a sh block without an example marker before {commands[:1]}"
    if found["paths"]:
        for path in found["paths"].split(","):
            assert (ROOT / path.strip()).is_file(), f"{doc}: {path} does not exist"
    if found["why"] is not None:
        assert len(found["why"].split()) >= 4, f"{doc}: say why it is not run"


RUN_HERE = [(d, c) for d, m, c in all_examples() if m == "<!-- example: run here -->"]


@pytest.mark.parametrize(("doc", "commands"), RUN_HERE)
def test_each_example_marked_run_here_runs(doc: str, commands: list[str], tmp_path: Path) -> None:
    home = tmp_path / "home"
    set_embedder(home, STATIC_EMBEDDER)  # runs feral init first
    outputs = []
    for command in commands:
        program, *args = shlex.split(command)
        assert program == "feral", f"{doc}: {command}"
        result = feral(home, *args)
        assert result.exit_code == 0, (doc, command, result.output)
        outputs.append(result.output)
    assert all(outputs), (doc, outputs)


def test_the_graph_example_answers_what_the_doc_says(tmp_path: Path) -> None:
    """docs/MEMORY.md's graph example: from Germany inbound over ``located_in``, Berlin at one
    hop and Kreuzberg at two."""
    ((_, commands),) = [(d, c) for d, c in RUN_HERE if "graph query" in " ".join(c)]
    home = tmp_path / "home"
    set_embedder(home, STATIC_EMBEDDER)
    for command in commands[:-1]:
        assert feral(home, *shlex.split(command)[1:]).exit_code == 0
    answer = feral(home, *shlex.split(commands[-1])[1:], "--json")
    hops = {row["name"]: row["hops"] for row in json.loads(answer.stdout)["results"]}
    assert hops == {"Berlin": 1, "Kreuzberg": 2}


COMMAND_DOCS = [ROOT / "docs" / name for name in ("CLI.md", "OPERATIONS.md", "MEMORY.md")]
"""The docs whose commands are also shown inline, in tables and prose."""
NOT_RUN_INLINE = {
    "demo": ("three nodes of its own, on temporary homes", "tests/cli/test_processes.py"),
    "serve": ("a server that runs until stopped", "tests/cli/servers.py"),
    "mcp": ("a server on stdin and stdout", "tests/cli/test_mcp_stdio.py"),
    "now": ("it needs a peer to dial", "tests/cli/test_absorb_processes.py"),
}
"""Inline examples of these commands are checked for their command and options but not run
here: why, and the tests that run the command as a process instead."""


def test_the_commands_not_run_inline_are_run_elsewhere() -> None:
    for command, (_, path) in NOT_RUN_INLINE.items():
        assert f'"{command}"' in (ROOT / path).read_text(encoding="utf-8"), (command, path)


def inline_examples(text: str) -> list[str]:
    """Each inline ``feral ...`` code span, on one line, a table's ``\\|`` read as ``|``."""
    spans = re.findall(r"`(feral [^`]+)`", text)
    return [" ".join(span.replace("\\|", "|").split()) for span in spans]


def command_of(words: list[str]) -> tuple[click.Command, list[str]]:
    """The command ``words`` names (after ``feral``), and the words that follow it."""
    command: click.Command = cli
    context = click.Context(cli)
    while words and isinstance(command, click.Group):
        found = command.get_command(context, words[0])
        if found is None:
            break
        command, words = found, words[1:]
        context = click.Context(command, parent=context)
    return command, words


def unknown_options(example: str) -> list[str]:
    """The ``--options`` an inline example names that its command does not take."""
    command, rest = command_of(example.split()[1:])
    taken = {opt for param in [*command.params, *cli.params] for opt in param.opts}
    named = [word.strip("[]").split("=")[0] for word in rest if word.strip("[").startswith("--")]
    return [option for option in named if option not in taken | {"--help"}]


INLINE = sorted(
    {
        (str(doc.relative_to(ROOT)), example)
        for doc in COMMAND_DOCS
        for example in inline_examples(doc.read_text(encoding="utf-8"))
    }  # fmt: skip
)


def test_the_docs_show_commands_inline() -> None:
    assert len(INLINE) > 50


@pytest.mark.parametrize(("doc", "example"), INLINE)
def test_each_inline_command_names_a_command_and_its_options(doc: str, example: str) -> None:
    command, rest = command_of(example.split()[1:])
    assert command is not cli, f"{doc}: {example}: no such command"
    assert unknown_options(example) == [], f"{doc}: {example}"
    if isinstance(command, click.Group):
        assert not rest, f"{doc}: {example}: {rest[0]} is not a command of {command.name}"


def concrete(example: str) -> bool:
    """Whether an inline example can run as written: no placeholder (``ID``, ``[--x]``,
    ``<id>``), no home of its own, not a command that serves or dials (NOT_RUN_INLINE), and not
    the bare name of a command that takes arguments (prose naming it, as in "what `feral memory
    search` finds")."""
    words = example.split()[1:]
    command, rest = command_of(words)
    placeholder = any(w.isupper() or w[:1] in "[<" or w.endswith("|") for w in words)
    takes_arguments = any(isinstance(param, click.Argument) for param in command.params)
    named_only = takes_arguments and not rest
    served = "--home" in words or set(words) & set(NOT_RUN_INLINE)
    return not (placeholder or named_only or served or isinstance(command, click.Group))


RUNNABLE = sorted({example for _, example in INLINE if concrete(example)})


@pytest.mark.parametrize("example", RUNNABLE)
def test_each_concrete_inline_example_runs(example: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    set_embedder(home, STATIC_EMBEDDER)
    result = feral(home, *shlex.split(example)[1:])
    assert result.exit_code == 0, (example, result.output)


def test_the_inline_check_catches_a_stale_option_and_command() -> None:
    assert unknown_options("feral memory search tea --top-k 3 --no-such-option") == [
        "--no-such-option"
    ]
    assert unknown_options("feral sync prune [--dry-run] --home H --json") == []
    assert command_of(["memory", "serach", "tea"])[0].name == "memory"
    assert not concrete("feral memory search") and concrete("feral memory search tea")


def table_rows(text: str) -> list[tuple[str, list[str]]]:
    """``(command, the options its row names)`` for each row of docs/CLI.md's command table."""
    rows = []
    for line in text.splitlines():
        row = re.match(r"\| `(feral [^`]+)` \| (.*)\|\s*$", line)
        if row:
            words = row[1].replace("\\|", "|").split()
            path = [word for word in words if not word.lstrip("[").startswith("-")]
            rows.append((" ".join(path), re.findall(r"`(--[a-z][\w-]*)", row[2])))
    return rows


CLI_ROWS = table_rows((ROOT / "docs" / "CLI.md").read_text(encoding="utf-8"))


def test_the_command_table_has_a_row_per_command() -> None:
    assert len(CLI_ROWS) >= 40


@pytest.mark.parametrize(("command", "options"), CLI_ROWS)
def test_each_option_a_command_row_names_is_the_commands(command: str, options: list[str]) -> None:
    assert unknown_options(" ".join([command, *options])) == [], command


def test_the_digest_example_is_what_digest_prints(tmp_path: Path) -> None:
    """docs/MEMORY.md's digest block, printed by ``feral memory digest --topic tea`` after the
    four memories it shows (only the time of the store differs)."""
    text = (ROOT / "docs" / "MEMORY.md").read_text(encoding="utf-8")
    shown = re.search(r"```\n(<memory-context>\n.*?</memory-context>)\n```", text, re.S)
    assert shown is not None, "no digest block in docs/MEMORY.md"
    home = tmp_path / "home"
    set_embedder(home, STATIC_EMBEDDER)
    said = ["always answer in French", "I like green tea", "remind me to call the dentist"]
    for fact in [*said, "I live in Porto"]:
        assert feral(home, "memory", "remember", fact).exit_code == 0
    printed = feral(home, "memory", "digest", "--topic", "tea").stdout.strip()
    stamp = re.compile(r"as of \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
    assert stamp.sub("as of T", printed) == stamp.sub("as of T", shown[1])


def mcp_settings(doc: Path) -> dict[str, object]:
    """The MCP settings block a doc shows (one ``json`` block naming ``mcpServers``)."""
    blocks = re.findall(r"```json\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)
    (settings,) = [json.loads(block) for block in blocks if "mcpServers" in block]
    assert isinstance(settings, dict)
    return settings


@pytest.mark.slow
async def test_the_mcp_settings_shown_start_a_server_an_assistant_can_use(tmp_path: Path) -> None:
    """The README's and docs/MCP.md's settings, run as an assistant runs them (its home
    swapped for a fresh one): the server starts over stdio and lists its tools."""
    shown = mcp_settings(ROOT / "README.md")
    assert mcp_settings(ROOT / "docs" / "MCP.md") == shown
    server = shown["mcpServers"]["feral"]  # type: ignore[index]
    assert server["command"] == "feral"
    home = tmp_path / "home"
    set_embedder(home, STATIC_EMBEDDER)
    args = [str(home) if arg.endswith("/.feral") else arg for arg in server["args"]]
    command = feral_command()
    params = StdioServerParameters(command=command[0], args=[*command[1:], *args])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
    assert "search" in {tool.name for tool in tools.tools}
