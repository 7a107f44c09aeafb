"""Real ``feral`` nodes for process tests: homes, CLI calls, and ``feral serve`` processes.

A :class:`Mesh` owns every process it starts and kills whatever is still running when it exits,
so no ``feral serve`` outlives the test that started it, however the test ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import sqlean
from click.testing import CliRunner

from feral.cli.main import cli
from feral.storage.encoders.embedders import STATIC_EMBEDDER

from .helpers import feral_command, set_embedder

__all__ = [
    "FeralNode",
    "Mesh",
    "export_rows",
    "free_port",
    "lww_winners",
    "pair",
    "render_export",
    "run_parallel",
    "wait_until",
]

T = TypeVar("T")

CLI_TIMEOUT_S = 180.0
READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 8.0
OWN_ENV = (
    "FERAL_HOME",
    "FERAL_CLOCK_OFFSET_MS",
    "FERAL_ANTI_ENTROPY_S",
    "FERAL_TEST_EMBED_HOLD",
    "FERAL_EMBED_THREADS",
)


def free_port() -> int:
    """A port nothing listens on right now (bound to 127.0.0.1:0 and released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Callable[[], T], timeout: float, interval: float = 0.1) -> T | None:
    """Call ``check`` until it returns something truthy, or give up after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)


def export_rows(text: str) -> dict[tuple[str, str], dict[str, Any]]:
    """``feral memory export`` output keyed by (table, id)."""
    rows = (json.loads(line) for line in text.splitlines())
    return {(row["table"], row["id"]): row for row in rows}


def lww_winners(*exports: str) -> dict[tuple[str, str], dict[str, Any]]:
    """Per row, the version with the greatest ``(hlc, origin)`` among the given exports."""
    winners: dict[tuple[str, str], dict[str, Any]] = {}
    for text in exports:
        for key, row in export_rows(text).items():
            held = winners.get(key)
            if held is None or (row["hlc"], row["origin"]) > (held["hlc"], held["origin"]):
                winners[key] = row
    return winners


def render_export(rows: dict[tuple[str, str], dict[str, Any]]) -> str:
    """The text ``feral memory export`` writes for ``rows`` (sorted by table, then id)."""
    return "".join(
        json.dumps(rows[key], sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"
        for key in sorted(rows)
    )


@dataclass(eq=False)
class FeralNode:
    """One device: a home folder, a port for its server, and the environment it runs in."""

    name: str
    home: Path
    port: int
    logs: Path
    env: dict[str, str] = field(default_factory=dict)
    node_id: str = ""
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    tls: bool = False
    """Serve over TLS (``feral serve --tls``), and be dialled at a ``wss://`` url."""

    @property
    def url(self) -> str:
        return f"{'wss' if self.tls else 'ws'}://127.0.0.1:{self.port}"

    @property
    def database(self) -> Path:
        return self.home / "feral.db"

    def environment(self) -> dict[str, str]:
        """This process's environment without feral's own variables, plus the node's."""
        base = {k: v for k, v in os.environ.items() if k not in OWN_ENV}
        return {**base, **self.env}

    def argv(self, *args: str) -> list[str]:
        return [*feral_command(), "--home", str(self.home), *args]

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``feral --home HOME ARGS`` as its own process and wait for it."""
        result = subprocess.run(
            self.argv(*args),
            capture_output=True,
            text=True,
            env=self.environment(),
            timeout=CLI_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        if check:
            assert result.returncode == 0, (
                f"{self.name}: feral {' '.join(args)} exited {result.returncode}: {result.stderr}"
            )
        return result

    def cli(self, *args: str) -> str:
        """Run ``feral --home HOME ARGS`` in this process (quicker, for setting a node up)."""
        env: dict[str, str | None] = {name: None for name in OWN_ENV}
        env.update(self.env)
        result = CliRunner().invoke(
            cli, ["--home", str(self.home), *args], env=env, catch_exceptions=False
        )
        assert result.exit_code == 0, f"{self.name}: feral {' '.join(args)}: {result.output}"
        return result.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "--json").stdout)

    def export(self) -> str:
        return self.run("memory", "export").stdout

    def status(self) -> dict[str, Any]:
        result: dict[str, Any] = self.json("sync", "status")
        return result

    def peer_status(self, peer: FeralNode) -> dict[str, Any]:
        rows: list[dict[str, Any]] = self.status()["peers"]
        mine = [p for p in rows if p["node_id"] == peer.node_id]
        assert len(mine) == 1, f"{self.name} has no peer {peer.name}"
        return mine[0]

    def query(self, sql: str, *params: object) -> list[Any]:
        """Rows of one read of the database file, which must exist (a short read transaction)."""
        assert self.database.exists(), f"{self.name}: no database yet"
        conn = sqlean.connect(str(self.database), timeout=10)
        try:
            return list(conn.execute(sql, params).fetchall())
        finally:
            conn.close()

    @contextlib.contextmanager
    def spawn(self, *args: str) -> Iterator[subprocess.Popen[str]]:
        """``feral --home HOME ARGS`` in the background; killed and reaped on the way out."""
        proc = subprocess.Popen(
            self.argv(*args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.environment(),
        )
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate(timeout=CLI_TIMEOUT_S)

    def count(self, table: str = "facts") -> int:
        """Rows in ``table``, read straight from the database file (a short read transaction)."""
        conn = sqlean.connect(str(self.database), timeout=5)
        try:
            return int(conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])
        finally:
            conn.close()

    def serve_log(self) -> str:
        return "".join(
            path.read_text(encoding="utf-8", errors="replace")
            for path in sorted(self.logs.glob(f"{self.name}.serve.*.log"))
        )

    # -- the server process ------------------------------------------------------------------

    @property
    def serving(self) -> bool:
        """Whether this node's ``feral serve`` is running."""
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        """Start ``feral serve`` on this node's port; :meth:`wait_ready` waits for it."""
        assert self.process is None or self.process.poll() is not None, "already serving"
        self.starts += 1
        log = self.logs / f"{self.name}.serve.{self.starts}.log"
        with log.open("wb") as handle:
            self.process = subprocess.Popen(
                self.argv("serve", "--port", str(self.port), *(["--tls"] if self.tls else [])),
                stdin=subprocess.DEVNULL,
                stdout=handle,
                stderr=subprocess.STDOUT,
                env=self.environment(),
            )

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        """Wait until the server accepts TCP connections and has said it is serving."""
        process = self.process
        assert process is not None

        def ready() -> bool:
            if process.poll() is not None:
                raise AssertionError(
                    f"{self.name}: feral serve exited {process.returncode}: {self.serve_log()}"
                )
            with contextlib.suppress(OSError):
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return "serving" in self.serve_log()
            return False

        if not wait_until(ready, timeout, interval=0.05):
            raise AssertionError(f"{self.name}: feral serve not ready after {timeout} s")

    def kill(self) -> None:
        """SIGKILL the server (a crash: no shutdown code runs)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=STOP_TIMEOUT_S)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it has not exited in time."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=STOP_TIMEOUT_S)


class Mesh:
    """Nodes under one temporary folder; a context manager that stops every server it started."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.logs = root / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.nodes: list[FeralNode] = []

    def __enter__(self) -> Mesh:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop_all()

    def stop_all(self) -> None:
        running = [n for n in self.nodes if n.process is not None and n.process.poll() is None]
        for node in running:
            node.process.terminate()  # type: ignore[union-attr]
        for node in running:
            node.stop()

    def add(
        self,
        *names: str,
        env: dict[str, dict[str, str]] | None = None,
        embedder: str = STATIC_EMBEDDER,
        tls: bool = False,
    ) -> list[FeralNode]:
        """Create nodes (``feral init --name NAME``), each with a free port, and learn their ids.

        They embed with the light static model unless ``embedder`` says otherwise: these tests
        are about processes and sync, not recall, and every ``feral`` process that embeds with
        the default encoder first pays about 0.4 s of CPU to load onnxruntime and the model.
        """
        created = [
            FeralNode(
                name, self.root / name, free_port(), self.logs, dict((env or {}).get(name, {})),
                tls=tls,
            )
            for name in names
        ]  # fmt: skip
        for node in created:
            node.node_id = node.cli("init", "--name", node.name).strip()
            set_embedder(node.home, embedder)
        self.nodes.extend(created)
        return created

    def start(self, *nodes: FeralNode) -> None:
        """Start several servers at once and wait until each is ready."""
        for node in nodes:
            node.start()
        for node in nodes:
            node.wait_ready()


def pair(node: FeralNode, peer: FeralNode, *, dial: bool) -> None:
    """Pair ``node`` with ``peer``: with the peer's URL if ``dial``, else accept-only."""
    args = ["sync", "peers", "add"] + ([peer.url] if dial else []) + ["--node-id", peer.node_id]
    node.cli(*args)


def pair_dialing(dialer: FeralNode, listener: FeralNode) -> None:
    """Pair two nodes one way round: ``dialer`` dials ``listener``, which accepts it only."""
    pair(dialer, listener, dial=True)
    pair(listener, dialer, dial=False)


def run_parallel(
    calls: Iterable[tuple[FeralNode, Sequence[str]]],
) -> list[subprocess.CompletedProcess[str]]:
    """Run several CLI calls side by side (on different homes) and wait for all of them."""
    started = []
    for node, args in calls:
        proc = subprocess.Popen(
            node.argv(*args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=node.environment(),
        )
        started.append((proc, list(args)))
    results = []
    try:
        for proc, args in started:
            out, err = proc.communicate(timeout=CLI_TIMEOUT_S)
            results.append(subprocess.CompletedProcess(args, proc.returncode, out, err))
    finally:
        for proc, _ in started:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return results
