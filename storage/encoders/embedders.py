"""The ``memory.embedder`` setting: which shipped model embeds episodes and facts, if any.

- ``"minilm-l6-int8"`` (the default): all-MiniLM-L6-v2 itself as int8 ONNX, run by
  onnxruntime (storage/encoders/onnx_model.py). It finds paraphrases among look-alike memories,
  which is what search by meaning is for; a query costs a few milliseconds.
- ``"minilm-static-256"``: the static model distilled from it (storage/encoders/static_model.py),
  for small devices: 15 MB, a table lookup, no onnxruntime needed, weaker on paraphrases.
- ``"none"``: no vector leg at all (search is full-text only, and ``stats`` says so).

A model is loaded once per process and shared (many nodes in one test run, or a server with
its API and its links, all use the same one). A missing runtime or a missing or damaged model
is a :class:`~feral.storage.db.errors.ModelUnavailable` that names the way out, never a silent
fallback to another model or to no vectors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from feral.sync.errors import ConfigError

from .model_stamps import DigestStamps
from .onnx_model import OnnxEmbedder, embed_threads
from .static_model import StaticEmbedder

if TYPE_CHECKING:
    from feral.storage.vectors.vectors import Embedder

__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDER_CHOICES",
    "MODELS_DIR",
    "NO_EMBEDDER",
    "STATIC_EMBEDDER",
    "load_embedder",
]

MODELS_DIR = Path(__file__).resolve().parent / "models"
"""Where the shipped models live (package data)."""
DEFAULT_EMBEDDER = "minilm-l6-int8"
STATIC_EMBEDDER = "minilm-static-256"
NO_EMBEDDER = "none"
EMBEDDER_CHOICES = (DEFAULT_EMBEDDER, STATIC_EMBEDDER, NO_EMBEDDER)
"""The values ``memory.embedder`` accepts."""


def load_embedder(name: str | None = None, stamps: Path | None = None) -> Embedder | None:
    """The embedder the ``memory.embedder`` setting names (``None`` means the default).

    ``"none"`` turns the vector leg off and returns ``None``. ``stamps`` is the record of model
    files already verified (storage/encoders/model_stamps.py; a node keeps one in its home): files
    unchanged since are not hashed again.

    Raises:
        ConfigError: an unknown name, or a malformed ``FERAL_EMBED_THREADS``.
        ModelUnavailable: the model (or, for the default, onnxruntime) is missing or damaged.
    """
    chosen = DEFAULT_EMBEDDER if name is None else name
    if chosen == NO_EMBEDDER:
        return None
    if chosen == DEFAULT_EMBEDDER:
        return _encoder(MODELS_DIR / DEFAULT_EMBEDDER, embed_threads(), stamps)
    if chosen == STATIC_EMBEDDER:
        return _static(MODELS_DIR / STATIC_EMBEDDER, stamps)
    choices = ", ".join(json.dumps(c) for c in EMBEDDER_CHOICES)
    raise ConfigError(f"unknown embedder {chosen!r}: memory.embedder must be one of {choices}")


_LOADED: dict[tuple[str, Path, int], Embedder] = {}
"""The models loaded in this process, by kind, folder and threads: each is loaded (and its
files verified, against the first caller's ``stamps``) once, whatever home asks for it."""


def _encoder(directory: Path, threads: int, stamps: Path | None) -> Embedder:
    key = ("onnx", directory, threads)
    if key not in _LOADED:
        _LOADED[key] = OnnxEmbedder(directory, threads, DigestStamps(stamps) if stamps else None)
    return _LOADED[key]


def _static(directory: Path, stamps: Path | None) -> Embedder:
    key = ("static", directory, 0)
    if key not in _LOADED:
        _LOADED[key] = StaticEmbedder(directory, DigestStamps(stamps) if stamps else None)
    return _LOADED[key]
