"""How fast the ``feral`` command answers: whole processes, timed against ``python -c pass``.

``python -m benchmarks cli [--json] [--facts N] [--runs N]`` stores N facts (default 5,000)
in a fresh home with the default model and embeds them, then times, as a user runs them,
``feral --help``, ``feral memory remember TEXT`` (a new fact each time, so each run goes
through the absorb pipeline and writes) and ``feral memory search QUERY``, and beside them
the bare interpreter (``python -c pass``): the floor no command can go below, taken in the
same run so a busy machine inflates both alike.

``remember`` and ``search`` are timed three times, each on its own copy of that home: as a
user runs them with no server (the first command works alone and starts the home's resident,
cli/resident.py, which answers the next ones: the run waits for it once, untimed); alone, with
no resident (``FERAL_RESIDENT_IDLE_S=0``: the command loads the node and the model itself each
time); and with a ``feral serve`` running, to which the command hands its request
(cli/serve_handoff.py). The CPU figure is the command's process alone; the resident's or the
server's share of the work shows in the wall time. The run also reports how long the resident
took to be ready after the first command had answered (``resident_ready_s``).

Warm, as a user's second command is: each command runs once untimed first, and the children
cache their bytecode (in a folder of the run, even where ``PYTHONDONTWRITEBYTECODE`` is set,
as an installed package has its bytecode compiled). The runs are interleaved, each command
once per round, and the report gives each command's median wall time, its median CPU time
(user and system: the figure a busy machine does not inflate), the floor's, and the goal
(issue 15: ``--help`` 100 ms, ``remember`` 200 ms, ``search`` 300 ms, medians, warm).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from feral.node.home.resident_runtime import IDLE_ENV
from feral.node.node import Node
from feral.storage.encoders.embedders import DEFAULT_EMBEDDER, load_embedder

from .corpus import make_queries, make_triples

__all__ = ["GOALS_MS", "CommandTime", "render_cli", "run_cli"]

GOALS_MS = {
    "help": 100.0,
    "remember": 200.0,
    "search": 300.0,
    "remember_alone": 200.0,
    "search_alone": 300.0,
    "remember_served": 200.0,
    "search_served": 300.0,
}
"""Each command's goal: its median wall time, warm, on a 5k-fact home."""
LABELS = {
    "help": "feral --help",
    "remember": "feral memory remember",
    "search": "feral memory search",
    "remember_alone": "remember, no resident",
    "search_alone": "search, no resident",
    "remember_served": "remember, serve running",
    "search_served": "search, serve running",
}
READY_TIMEOUT_S = 120.0
RESIDENT_IDLE_S = 600
"""The default ``cli.resident_idle_s``, set in the children's environment (a test run sets 0)."""
Times = dict[str, list[tuple[float, float]]]


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


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _serving(home: Path, env: dict[str, str], log: Path) -> Iterator[None]:
    """``feral serve`` on ``home`` until the block ends, once it has written its runtime file
    and accepts connections."""
    from feral.node.home.serve_runtime import live_serve_runtime

    port = _free_port()
    argv = [*_feral_command(), "--home", str(home), "serve", "--port", str(port)]
    with log.open("wb") as output:
        server = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=output,
                                  stderr=subprocess.STDOUT)  # fmt: skip
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while live_serve_runtime(home) is None:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"feral serve did not start: {log.read_text()}")
            time.sleep(0.05)
        yield
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@contextlib.contextmanager
def _resident(home: Path, env: dict[str, str], warm_up: list[str]) -> Iterator[float]:
    """Run ``warm_up`` (a command that works alone and starts the resident) and yield how long
    the resident took to be ready after it ended; the resident is stopped on the way out."""
    from feral.node.home.resident_runtime import live_resident

    subprocess.run(warm_up, env=env, check=True, capture_output=True)
    ended = time.perf_counter()
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while (runtime := live_resident(home)) is None:
            if time.monotonic() > deadline:
                raise RuntimeError("no resident started")
            time.sleep(0.01)
        yield time.perf_counter() - ended
    finally:
        runtime = live_resident(home)
        if runtime is not None:
            os.kill(runtime.pid, signal.SIGTERM)


def _rounds(homes: dict[str, Path], facts: int, runs: int, env: dict[str, str]) -> Times:
    feral = {kind: [*_feral_command(), "--home", str(home)] for kind, home in homes.items()}
    texts = [" ".join(t) for t in make_triples(facts + 3 * (runs + 1))[facts:]]
    queries = make_queries(runs + 1)
    alone_env = {**env, IDLE_ENV: "0"}
    cases: dict[str, tuple[Callable[[int], list[str]], dict[str, str]]] = {
        "floor": (lambda i: [sys.executable, "-c", "pass"], env),
        "help": (lambda i: [*_feral_command(), "--help"], env),  # as a newcomer types it
        "remember": (lambda i: [*feral["home"], "memory", "remember", texts[3 * i]], env),
        "search": (lambda i: [*feral["home"], "memory", "search", queries[i]], env),
        "remember_alone": (
            lambda i: [*feral["alone"], "memory", "remember", texts[3 * i + 1]],
            alone_env,
        ),
        "search_alone": (lambda i: [*feral["alone"], "memory", "search", queries[i]], alone_env),
        "remember_served": (
            lambda i: [*feral["served"], "memory", "remember", texts[3 * i + 2]],
            env,
        ),
        "search_served": (lambda i: [*feral["served"], "memory", "search", queries[i]], env),
    }
    times: Times = {name: [] for name in cases}
    for round_number in range(runs + 1):  # round 0 warms up and is not counted
        for name, (argv, case_env) in cases.items():
            measured = _timed(argv(round_number), case_env)
            if round_number:
                times[name].append(measured)
    return times


def run_cli(facts: int = 5_000, runs: int = 15) -> dict[str, Any]:
    """The medians (see the module docstring), measured in a fresh home."""
    with tempfile.TemporaryDirectory() as folder:
        homes = {kind: Path(folder) / kind for kind in ("home", "alone", "served")}
        asyncio.run(_fill(homes["home"], facts))
        for kind in ("alone", "served"):  # the same facts on each
            shutil.copytree(homes["home"], homes[kind])
        env = {**_child_env(Path(folder)), IDLE_ENV: str(RESIDENT_IDLE_S)}
        warm_up = [*_feral_command(), "--home", str(homes["home"]), "memory", "search", "warm"]
        with (
            _serving(homes["served"], env, Path(folder) / "serve.log"),
            _resident(homes["home"], env, warm_up) as ready_s,
        ):
            times = _rounds(homes, facts, runs, env)
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
        "resident_ready_s": round(ready_s, 2),
        "times": {name: asdict(t) for name, t in medians.items()},
    }


def render_cli(result: dict[str, Any]) -> str:
    """The table benchmarks/README.md shows: each command beside the floor and its goal."""
    floor = result["times"]["floor"]
    lines = [
        f"{result['facts']} facts, {result['runs']} runs each, medians; load average "
        f"{result['load_average']} on {result['cpu_count']} CPUs; the resident was ready "
        f"{result['resident_ready_s']} s after the first command",
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
