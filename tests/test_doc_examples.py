"""Every shell example in the README, docs/ and benchmarks/README.md is run by a test, or says
in the doc why not (issue 26, item 6).

The line before each ``sh`` block is a comment the reader does not see:
``<!-- example: run here -->`` (this file runs each line in a fresh home and requires exit 0),
``<!-- example: run by PATH, PATH -->`` (the tests or scripts named run it), or
``<!-- example: not run: REASON -->`` (a second machine, a printed link, a whole install).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from feral.storage.encoders.embedders import STATIC_EMBEDDER

from .cli.helpers import feral, set_embedder

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
