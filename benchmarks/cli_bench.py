"""How fast the ``feral`` command answers: whole processes, timed against ``python -c pass``.

``python -m benchmarks cli [--json] [--facts N] [--runs N]`` stores N facts (default 5,000)
in a fresh home with the default model and embeds them, then times, as a user runs them,
``feral --help``, ``feral memory remember TEXT`` (a new fact each time, so each run goes
through the absorb pipeline and writes) and ``feral memory search QUERY``, and beside them
the bare interpreter (``python -c pass``): the floor no command can go below, taken in the
same run so a busy machine inflates both alike.

Warm, as a user's second command is: each command runs once untimed first, and the children
cache their bytecode (in a folder of the run, even where ``PYTHONDONTWRITEBYTECODE`` is set,
as an installed package has its bytecode compiled). The runs are interleaved, each command
once per round, and the report gives each command's median wall time, its median CPU time
(user and system: the figure a busy machine does not inflate), the floor's, and the goal
(issue 15: ``--help`` 100 ms, ``remember`` 200 ms, ``search`` 300 ms, medians, warm).
"""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from feral.node.node import Node
from feral.storage.embedders import DEFAULT_EMBEDDER, load_embedder

from .corpus import make_queries, make_triples

__all__ = ["GOALS_MS", "CommandTime", "render_cli", "run_cli"]

GOALS_MS = {"help": 100.0, "remember": 200.0, "search": 300.0}
"""Each command's goal: its median wall time, warm, on a 5k-fact home."""
LABELS = {
    "help": "feral --help",
    "remember": "feral memory remember",
    "search": "feral memory search",
}


@dataclass(frozen=True)
class CommandTime:
    """One command's medians over the run (milliseconds)."""

    wall_ms: float
    cpu_ms: float
    goal_ms: float | None


def _feral_command() -> list[str]:
    """The console script beside this interpreter, as a user runs it (``python -m feral.cli``
    where it is not installed as a script)."""
    script = Path(sys.executable).with_name("feral")
    if script.exists():
        return [str(script)]
    found = shutil.which("feral")
    return [found] if found else [sys.executable, "-m", "feral.cli"]


def _child_env(folder: Path) -> dict[str, str]:
    dropped = ("PYTHONDONTWRITEBYTECODE", "FERAL_HOME")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PYTHONPYCACHEPREFIX"] = str(folder / "bytecode")
    return env


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU milliseconds of one process, run to its end (it must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000


async def _fill(home: Path, facts: int) -> None:
    node = await Node.open(home, embedder=load_embedder(DEFAULT_EMBEDDER))
    try:
        await node.import_facts(make_triples(facts))
        await node.embed_queued()
    finally:
        await node.close()


def _rounds(home: Path, facts: int, runs: int, env: dict[str, str]) -> dict[str, list[Any]]:
    feral = [*_feral_command(), "--home", str(home)]
    texts = [" ".join(t) for t in make_triples(facts + runs + 1)[facts:]]
    queries = make_queries(runs + 1)
    cases = {
        "floor": lambda i: [sys.executable, "-c", "pass"],
        "help": lambda i: [*feral, "--help"],
        "remember": lambda i: [*feral, "memory", "remember", texts[i]],
        "search": lambda i: [*feral, "memory", "search", queries[i]],
    }
    times: dict[str, list[Any]] = {name: [] for name in cases}
    for round_number in range(runs + 1):  # round 0 warms up and is not counted
        for name, argv in cases.items():
            measured = _timed(argv(round_number), env)
            if round_number:
                times[name].append(measured)
    return times


def run_cli(facts: int = 5_000, runs: int = 15) -> dict[str, Any]:
    """The medians (see the module docstring), measured in a fresh home."""
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        asyncio.run(_fill(home, facts))
        times = _rounds(home, facts, runs, _child_env(Path(folder)))
    medians = {
        name: CommandTime(
            round(statistics.median(t[0] for t in runs_of), 1),
            round(statistics.median(t[1] for t in runs_of), 1),
            GOALS_MS.get(name),
        )
        for name, runs_of in times.items()
    }
    return {
        "facts": facts,
        "runs": runs,
        "command": " ".join(Path(part).name for part in _feral_command()),
        "load_average": [round(x, 1) for x in os.getloadavg()],
        "cpu_count": os.cpu_count(),
        "times": {name: asdict(t) for name, t in medians.items()},
    }


def render_cli(result: dict[str, Any]) -> str:
    """The table the README shows: each command beside the floor and its goal."""
    floor = result["times"]["floor"]
    lines = [
        f"{result['facts']} facts, {result['runs']} runs each, medians; load average "
        f"{result['load_average']} on {result['cpu_count']} CPUs",
        "command                  wall ms  floor ms  goal ms  met | CPU ms  floor CPU ms",
    ]
    for name, t in result["times"].items():
        if name == "floor":
            continue
        met = "yes" if t["wall_ms"] <= t["goal_ms"] else "no"
        lines.append(
            f"{LABELS[name]:24} {t['wall_ms']:7.1f}  {floor['wall_ms']:8.1f}  "
            f"{t['goal_ms']:7.0f}  {met:>3} | {t['cpu_ms']:6.1f}  {floor['cpu_ms']:12.1f}"
        )
    return "\n".join(lines)
