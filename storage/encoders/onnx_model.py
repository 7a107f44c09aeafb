"""feral's default encoder: all-MiniLM-L6-v2 itself, int8, run by onnxruntime.

The static model (storage/encoders/static_model.py) is a lookup table and misses most paraphrases
among look-alike memories; the full transformer finds them (issue #12 measured 0.52 against 0.93 on
queries that share no content word with their memory). Exported once to ONNX and quantised to int8
per channel by ``storage/encoders/models/export_minilm.py``, it is 23 MB and needs only onnxruntime,
``tokenizers`` and numpy at run time: no torch, no network, no download (DESIGN §2).

Inference is sentence-transformers' for this model, step for step: WordPiece with ``[CLS]`` and
``[SEP]``, cut at 256 tokens (the model's ``max_seq_length``, so the stored torch reference
vectors are comparable and a long episode's tail still counts; the cost falls only on long
texts, since each batch is padded to its own longest text), the transformer, the mean of the
token vectors over the attention mask, scaled to unit length.

The files live in ``storage/encoders/models/minilm-l6-int8/``: ``config.json`` (name, dimension,
token limit, the graph's input and output names, provenance, and the SHA-256 of the other two files,
checked at load), ``model.onnx``, ``tokenizer.json``, and the ``LICENSE`` and ``NOTICE`` of
all-MiniLM-L6-v2 (Apache-2.0).

Threads: ``FERAL_EMBED_THREADS`` (default 1) sets onnxruntime's intra-op threads. One thread
keeps a query at a few milliseconds and leaves the other core to SQLite and the server, and a
batch on two threads is less than twice as fast (see benchmarks/README.md).
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from feral.sync.errors import ConfigError

from .model_files import (
    TOKENIZER_FILE,
    ModelDigests,
    check_digest,
    read_config,
    read_tokenizer,
    unavailable,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import onnxruntime
    from tokenizers import Tokenizer

    from .model_stamps import DigestStamps

    FloatMatrix = npt.NDArray[np.float32]
    FloatVector = npt.NDArray[np.float32]

__all__ = ["FORMAT", "THREADS_ENV", "OnnxEmbedder", "embed_threads"]

FORMAT = "feral-onnx-embedding/1"
MODEL_FILE = "model.onnx"
THREADS_ENV = "FERAL_EMBED_THREADS"
WAY_OUT = (
    'reinstall feral, or set memory.embedder in settings.json to "minilm-static-256" '
    '(the light model) or "none" (no vector search)'
)


class OnnxConfig(ModelDigests, kw_only=True):
    """What an ONNX model's ``config.json`` says of it (storage/encoders/models/export_minilm.py
    writes it): the graph's input and output names among them."""

    name: str
    dim: int
    inputs: tuple[str, ...]
    output: str
    max_tokens: int


def embed_threads() -> int:
    """onnxruntime's intra-op threads: ``$FERAL_EMBED_THREADS``, default 1.

    Raises:
        ConfigError: the variable is set to anything but a whole number from 1 to 64.
    """
    raw = os.environ.get(THREADS_ENV, "1").strip()
    if not raw.isdecimal() or not 1 <= int(raw) <= 64:
        raise ConfigError(f"{THREADS_ENV} must be a whole number from 1 to 64, got {raw!r}")
    return int(raw)


class OnnxEmbedder:
    """The ONNX encoder read from ``directory``; see the module docstring.

    Building it checks every file and that onnxruntime can be imported; the tokenizer and the
    onnxruntime session themselves are made on the first :meth:`embed`, so commands that embed
    nothing (stats, export, sync status) skip their cost (reading the tokenizer alone takes
    about 40 ms). Thread-safe: each is made once, under a lock, and onnxruntime's ``run`` may
    be called from several threads.

    Raises:
        ModelUnavailable: a file is missing, unreadable, altered or inconsistent, or
            onnxruntime is not installed.
    """

    def __init__(
        self, directory: Path, threads: int = 1, stamps: DigestStamps | None = None
    ) -> None:
        config = read_config(directory, OnnxConfig, WAY_OUT, model_format=FORMAT)
        self._name = config.name
        self._dim = config.dim
        self._inputs = config.inputs
        self._output = config.output
        if importlib.util.find_spec("onnxruntime") is None:
            problem = "needs onnxruntime, which is missing"
            raise unavailable(directory / MODEL_FILE, problem, WAY_OUT)
        for filename in (TOKENIZER_FILE, MODEL_FILE):
            check_digest(directory / filename, config.sha256.get(filename), WAY_OUT, stamps)
        self._tokenizer_path = directory / TOKENIZER_FILE
        self._max_tokens = config.max_tokens
        self._path = directory / MODEL_FILE
        self._threads = threads
        self._tokenizer: Tokenizer | None = None
        self._session: onnxruntime.InferenceSession | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text."""
        vectors: list[list[float]] = self.embed_array(texts).tolist()
        return vectors

    def embed_array(self, texts: Sequence[str]) -> FloatMatrix:
        """:meth:`embed` as a ``(len(texts), dim)`` float32 array.

        Each text runs through the graph alone. The int8 model quantizes its activations with
        one scale per run (``DynamicQuantizeLinear``), so a text run in a batch came out
        different from the same text alone (cosine 0.977 at worst, 0.991 on average, over
        1,000 facts): a vector would depend on what it happened to be embedded with, and with it
        near-duplicate decisions at the threshold, the ranking, and what two converged devices
        that embedded their rows in other batches answer. Alone, a text's vector depends on the
        text only, for little CPU: on one thread, 254 facts of ~21 tokens a CPU second against
        304 in batches of 32, and 132 texts of ~39 tokens against 120 (docs/MEMORY.md, *Search by
        meaning, offline*).
        """
        import numpy as np

        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        if not texts:
            return out
        session, tokenizer = self._ready()
        encodings = tokenizer.encode_batch(list(texts), add_special_tokens=True)
        for i, encoding in enumerate(encodings):
            out[i] = self._run(session, encoding.ids)
        return out

    def _run(self, session: onnxruntime.InferenceSession, token_ids: list[int]) -> FloatVector:
        """The mean-pooled, unit-length vector of one text's token ids (no padding: every
        token counts)."""
        import numpy as np

        ids = np.array([token_ids], dtype=np.int64)
        feeds = dict(zip(self._inputs, (ids, np.ones_like(ids)), strict=True))
        (hidden,) = session.run([self._output], feeds)
        mean = hidden[0].mean(axis=0)
        norm = float(np.linalg.norm(mean))
        unit: FloatVector = mean / norm if norm > 0 else np.zeros_like(mean)
        return unit

    def _ready(self) -> tuple[onnxruntime.InferenceSession, Tokenizer]:
        with self._lock:
            if self._tokenizer is None:
                path, limit = self._tokenizer_path, self._max_tokens
                self._tokenizer = read_tokenizer(path, limit, WAY_OUT)
            if self._session is None:
                self._session = self._open_session()
            return self._session, self._tokenizer

    def _open_session(self) -> onnxruntime.InferenceSession:
        try:
            import onnxruntime
        except ImportError as exc:
            problem = f"needs onnxruntime, which cannot be imported ({exc})"
            raise unavailable(self._path, problem, WAY_OUT) from exc
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle pool threads would otherwise spin for work and burn a core between batches.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only: no optimiser chatter on stderr
        try:
            session = onnxruntime.InferenceSession(
                str(self._path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own untyped errors for a bad graph
            raise unavailable(self._path, f"is not a usable ONNX model ({exc})", WAY_OUT) from exc
        names = {i.name for i in session.get_inputs()}
        if names != set(self._inputs):
            problem = f"takes the inputs {sorted(names)}, not config.json's {list(self._inputs)}"
            raise unavailable(self._path, problem, WAY_OUT)
        return session
