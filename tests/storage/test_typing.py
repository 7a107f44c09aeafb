"""The typed storage boundary: mypy rejects a call that does not fit the function it runs.

``Store.read``/``Store.write``, ``run_write`` and ``Node.write`` take ``fn`` and its arguments
(``ParamSpec``), storage functions take a ``Connection`` protocol rather than ``Any``, and the
rows written and listed have ``TypedDict`` shapes (storage/db/rows.py). The snippet below is checked
by mypy, as the project's own code is: each line marked ``# rejected`` must be reported, and
nothing else may be, so the test fails if the checks go (the rejected lines pass) and if they
are too strict (an accepted line is reported).
"""

from __future__ import annotations

import re
from pathlib import Path

from mypy import api

from tests.checkout import ROOT

SNIPPET = """\
from __future__ import annotations

import sqlite3

from feral.node.node import Node
from feral.storage.memory import memories
from feral.storage.db.connection import Connection
from feral.storage.db.rows import EpisodeRow
from feral.storage.store import open_sync, run_write


async def rejected(node: Node, conn: Connection) -> None:
    await node.store.write(memories.remember_fact, 123, "x", now_ms="later")  # rejected
    await node.write(memories.remember_fact, 123, now_ms="later")  # rejected
    await node.write(memories.remember_fact, ("s", "p", "o"), now_ms=1, colour="red")  # rejected
    await node.store.read(memories.list_episodes, "ten")  # rejected
    await node.store.read(memories.find_row)  # rejected
    run_write(conn, memories.nuke, node.node_id)  # rejected
    conn.execute(42)  # rejected
    conn.no_such_method()  # rejected
    fact = await node.remember(("s", "p", "o"))
    fact["subjct"]  # rejected
    episodes = await node.store.read(memories.list_episodes, 10)
    episodes[0]["confidence"]  # rejected


async def accepted(node: Node, conn: Connection) -> None:
    triple = ("s", "p", "o")
    await node.store.write(memories.remember_fact, node.node_id, node.clock.tick, triple, now_ms=1)
    await node.write(memories.remember_fact, triple, now_ms=1, confidence=0.5)
    episodes: list[EpisodeRow] = await node.store.read(memories.list_episodes, 10)
    await node.store.read(memories.find_row, "some-id", live_only=False)
    count: int = await node.store.read(lambda c: int(c.execute("SELECT 1").fetchone()[0]))
    run_write(conn, memories.nuke, node.node_id, node.clock.tick, "some-id")
    conn.executemany("INSERT INTO t VALUES (?)", [(1,), (2,)])
    standard: Connection = sqlite3.connect(":memory:")  # the stdlib fits the protocol too
    ours: Connection = open_sync(":memory:")
    subject: str = (await node.remember(triple))["subject"]
    summaries: list[str] = [e["summary"] for e in await node.episodes(5)]
"""


def mypy_error_lines(path: Path, cache: Path) -> dict[int, list[str]]:
    """Run mypy (strict, with the project's settings) on ``path``: its errors by line."""
    stdout, stderr, _ = api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--strict",
            "--cache-dir",
            str(cache),
            "--no-error-summary",
            "--hide-error-context",
            str(path),
        ]
    )
    assert not stderr, stderr
    found: dict[int, list[str]] = {}
    for match in re.finditer(rf"^{re.escape(str(path))}:(\d+): error: (.*)$", stdout, re.M):
        found.setdefault(int(match[1]), []).append(match[2])
    elsewhere = [
        line for line in stdout.splitlines() if ": error: " in line and str(path) not in line
    ]
    assert not elsewhere, elsewhere  # an error in feral itself, not in the snippet
    return found


def marked_lines(source: str, marker: str) -> set[int]:
    return {n for n, line in enumerate(source.splitlines(), 1) if line.endswith(marker)}


def test_mypy_rejects_calls_that_do_not_fit_the_storage_function_and_accepts_those_that_do(
    tmp_path: Path,
):
    snippet = tmp_path / "boundary.py"
    snippet.write_text(SNIPPET)
    errors = mypy_error_lines(snippet, tmp_path / "mypy-cache")
    rejected = marked_lines(SNIPPET, "# rejected")
    assert len(rejected) == 10
    missed = sorted(rejected - errors.keys())
    unexpected = {n: errors[n] for n in sorted(errors.keys() - rejected)}
    assert not missed, f"mypy accepted lines {missed} of the snippet"
    assert not unexpected, f"mypy rejected correct calls: {unexpected}"
