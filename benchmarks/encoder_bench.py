"""The default encoder's speed and memory: a query, a batch, and a real ``feral serve``.

- ``encoder_query_p50_ms``: one search query embedded alone (what every ``vector`` or
  ``hybrid`` search pays before SQLite is asked anything), median over the benchmark's query
  mix, one onnxruntime thread (the default); ``_cpu_ms``: the same in CPU time, which a busy
  machine does not inflate.
- ``encoder_sentences_per_s_1t`` and ``_2t``: episode summaries embedded in batches, as the
  embedding queue drains them, on one and on two threads (``per_cpu_s_1t``: per CPU second).
- ``static_query_p50_ms``: the same queries with the light model, for context.
- ``serve_peak_rss_mb``: the peak resident memory (``VmHWM`` in ``/proc/PID/status``) of a
  ``feral serve`` process with the default embedder, after it has stored and searched rows
  through its HTTP API, so the model and its onnxruntime session are loaded. Linux only: left
  out where ``/proc`` has no such line.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from feral.storage.encoders.embedders import (
    DEFAULT_EMBEDDER,
    MODELS_DIR,
    STATIC_EMBEDDER,
    load_embedder,
)
from feral.storage.encoders.onnx_model import OnnxEmbedder

from .corpus import SEED, make_episodes, make_queries

__all__ = ["run_encoder"]

WARMUP = 10
READY_TIMEOUT_S = 60.0


def _query_p50_ms(name: str, queries: list[str]) -> tuple[float, float]:
    """Median milliseconds per query: wall clock, and this thread's CPU time.

    With one onnxruntime thread the graph runs on the calling thread, so its CPU time is what
    the query costs on an idle core, whatever else the machine is doing.
    """
    embedder = load_embedder(name)
    assert embedder is not None
    for query in queries[:WARMUP]:
        embedder.embed([query])
    wall, cpu = [], []
    for query in queries:
        started, started_cpu = time.perf_counter(), time.thread_time()
        embedder.embed([query])
        wall.append(time.perf_counter() - started)
        cpu.append(time.thread_time() - started_cpu)
    return statistics.median(wall) * 1000, statistics.median(cpu) * 1000


def _throughput(texts: list[str], threads: int) -> tuple[float, float]:
    """Sentences per second on ``threads`` threads (a fresh session, warmed on a few texts):
    per wall-clock second, and per second of this thread's CPU time (meaningful for one)."""
    embedder = OnnxEmbedder(MODELS_DIR / DEFAULT_EMBEDDER, threads)
    embedder.embed(texts[:WARMUP])
    started, started_cpu = time.perf_counter(), time.thread_time()
    embedder.embed(texts)
    wall, cpu = time.perf_counter() - started, time.thread_time() - started_cpu
    return len(texts) / wall, len(texts) / cpu


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _post(port: int, path: str, body: dict[str, object]) -> None:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        answer.read()


def _wait_until_serving(process: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"feral serve exited {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("feral serve did not start listening")


def _peak_rss_mb(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def _serve_peak_rss_mb(texts: list[str], queries: list[str]) -> float | None:
    """Start ``feral serve`` on a fresh home, store and search through its API, read VmHWM."""
    script = Path(sys.executable).parent / "feral"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "feral.cli"]
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="feral-encoder-") as scratch:
        home = Path(scratch) / "home"
        env = {k: v for k, v in os.environ.items() if not k.startswith("FERAL_")}
        subprocess.run([*command, "--home", str(home), "init"], check=True, env=env,
                       capture_output=True)  # fmt: skip
        process = subprocess.Popen(
            [*command, "--home", str(home), "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_until_serving(process, port)
            for text in texts:
                _post(port, "/api/memory/remember", {"fact": text})
            for query in queries:
                _post(port, "/api/memory/search", {"query": query, "strategy": "hybrid"})
            return _peak_rss_mb(process.pid)
        finally:
            process.terminate()
            process.wait(timeout=30)


def run_encoder(sentences: int, queries: int, seed: int = SEED) -> dict[str, float]:
    """The figures in the module docstring; ``sentences`` episode summaries are embedded."""
    texts = [summary for summary, _ in make_episodes(sentences, seed)]
    mix = make_queries(queries, seed)
    query_ms, query_cpu_ms = _query_p50_ms(DEFAULT_EMBEDDER, mix)
    one, one_cpu = _throughput(texts, 1)
    figures = {
        "encoder_query_p50_ms": query_ms,
        "encoder_query_p50_cpu_ms": query_cpu_ms,
        "static_query_p50_ms": _query_p50_ms(STATIC_EMBEDDER, mix)[0],
        "encoder_sentences_per_s_1t": one,
        "encoder_sentences_per_cpu_s_1t": one_cpu,
        "encoder_sentences_per_s_2t": _throughput(texts, 2)[0],
        "encoder_batch_sentences": float(len(texts)),
    }
    peak = _serve_peak_rss_mb(texts[:50], mix[:20])
    if peak is not None:
        figures["serve_peak_rss_mb"] = peak
    return figures
