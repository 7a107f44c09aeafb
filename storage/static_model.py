"""The embedding model that ships inside feral: a static model distilled from all-MiniLM-L6-v2.

A static model keeps one vector per token of MiniLM's vocabulary (made once, by
``storage/models/distill.py``, from MiniLM's own output for each token, then reduced to 256
dimensions by PCA). Embedding a text is then a lookup, not a network: tokenize with MiniLM's
WordPiece tokenizer, average the token vectors, scale to unit length. That needs only ``numpy``
and ``tokenizers``: no torch, no network, no download at run time (DESIGN §2), and it reproduces
model2vec's own inference (the library the model was distilled with) to a cosine of 0.999+.

The files live in ``storage/models/<name>/``:

- ``config.json``: name, dimension, token limits, the source model, licence, and the SHA-256 of
  the other two files (checked at load, so a damaged install fails loudly, never quietly);
- ``tokenizer.json``: the tokenizer (Hugging Face ``tokenizers`` format);
- ``embeddings.npy``: the ``(vocabulary, dim)`` matrix, float16;
- ``LICENSE`` and ``NOTICE``: all-MiniLM-L6-v2 is Apache-2.0.

:func:`load_embedder` maps the ``memory.embedder`` setting to an embedder: the shipped model by
default, or ``"none"`` to turn the vector leg off. A missing or damaged model is a
:class:`~feral.storage.errors.ModelUnavailable` naming the file, never a silent fallback to no
vectors or to feature hashing.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from feral.sync.errors import ConfigError

from .errors import ModelUnavailable

if TYPE_CHECKING:
    # numpy and tokenizers are imported when a model loads, so commands that embed nothing
    # (and nodes with memory.embedder "none") skip their import time; .vectors is left out
    # at run time because distill.py loads this module without SQLite.
    import numpy as np
    import numpy.typing as npt
    from tokenizers import Tokenizer

    from .vectors import Embedder

    FloatMatrix = npt.NDArray[np.float32]

__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDER_CHOICES",
    "MODELS_DIR",
    "NO_EMBEDDER",
    "StaticEmbedder",
    "load_embedder",
]

MODELS_DIR = Path(__file__).resolve().parent / "models"
"""Where the shipped models live (package data)."""
DEFAULT_EMBEDDER = "minilm-static-256"
NO_EMBEDDER = "none"
EMBEDDER_CHOICES = (DEFAULT_EMBEDDER, NO_EMBEDDER)
"""The values ``memory.embedder`` accepts."""

CONFIG_FILE = "config.json"
TOKENIZER_FILE = "tokenizer.json"
MATRIX_FILE = "embeddings.npy"
FORMAT = "feral-static-embedding/1"


class StaticEmbedder:
    """A static embedding model read from ``directory``; see the module docstring.

    Thread-safe once built (the tokenizer and the read-only matrix are shared); embedding a
    text with no known token (empty, or only characters MiniLM's vocabulary lacks) gives the
    zero vector, which has no direction and so matches nothing in a vector search.

    Raises:
        ModelUnavailable: a file is missing, unreadable, altered or inconsistent.
    """

    def __init__(self, directory: Path) -> None:
        config = _read_config(directory)
        if config.get("format") != FORMAT:
            raise _unavailable(directory / CONFIG_FILE, f"is not in the format {FORMAT}")
        try:
            self._name = str(config["name"])
            self._dim = int(config["dim"])
            self._max_chars = int(config["max_chars"])
            self._normalize = bool(config["normalize"])
            max_tokens = int(config["max_tokens"])
            digests = dict(config["sha256"])
        except KeyError as exc:
            raise _unavailable(directory / CONFIG_FILE, f"lacks the key {exc}") from exc
        except (TypeError, ValueError) as exc:
            raise _unavailable(directory / CONFIG_FILE, f"holds a malformed value ({exc})") from exc
        for filename in (TOKENIZER_FILE, MATRIX_FILE):
            _check_digest(directory / filename, digests.get(filename))
        self._tokenizer = _read_tokenizer(directory / TOKENIZER_FILE, max_tokens)
        self._unknown = self._tokenizer.token_to_id(str(config.get("unk_token", "[UNK]")))
        self._matrix = _read_matrix(directory / MATRIX_FILE)
        rows, columns = self._matrix.shape
        if columns != self._dim or rows != self._tokenizer.get_vocab_size():
            raise _unavailable(
                directory / MATRIX_FILE,
                f"holds a {rows}x{columns} matrix; the tokenizer and config.json need "
                f"{self._tokenizer.get_vocab_size()}x{self._dim}",
            )

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector (or the zero vector, for a text with no known token) per text."""
        vectors: list[list[float]] = self.embed_array(texts).tolist()
        return vectors

    def embed_array(self, texts: Sequence[str]) -> FloatMatrix:
        """:meth:`embed` as a ``(len(texts), dim)`` float32 array."""
        import numpy as np

        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        if not texts:
            return out
        # As model2vec does: cut very long texts by characters first (cheap), then by tokens.
        encodings = self._tokenizer.encode_batch(
            [text[: self._max_chars] for text in texts], add_special_tokens=False
        )
        ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
        if self._unknown is not None:
            ids = [row[row != self._unknown] for row in ids]
        counts = np.array([len(row) for row in ids], dtype=np.int64)
        filled = np.flatnonzero(counts)
        if filled.size == 0:
            return out
        # One gather-and-sum per text: measured 3-5x faster than ``np.add.reduceat`` over all
        # texts' rows at once (which casts the float16 matrix element by element).
        sums = np.stack([self._matrix[ids[i]].sum(axis=0, dtype=np.float32) for i in filled])
        means = sums / counts[filled, None].astype(np.float32)
        if self._normalize:
            norms = np.linalg.norm(means, axis=1, keepdims=True)
            means = np.divide(means, norms, out=np.zeros_like(means), where=norms > 0)
        out[filled] = means
        return out


def load_embedder(name: str | None = None) -> Embedder | None:
    """The embedder the ``memory.embedder`` setting names (``None`` means the default).

    ``"none"`` turns the vector leg off and returns ``None``. The shipped model is loaded once
    per process and shared.

    Raises:
        ConfigError: an unknown name.
        ModelUnavailable: the shipped model is missing or damaged.
    """
    chosen = DEFAULT_EMBEDDER if name is None else name
    if chosen == NO_EMBEDDER:
        return None
    if chosen == DEFAULT_EMBEDDER:
        return _shipped(MODELS_DIR / DEFAULT_EMBEDDER)
    choices = ", ".join(json.dumps(c) for c in EMBEDDER_CHOICES)
    raise ConfigError(f"unknown embedder {chosen!r}: memory.embedder must be one of {choices}")


@functools.lru_cache(maxsize=4)
def _shipped(directory: Path) -> StaticEmbedder:
    return StaticEmbedder(directory)


def _unavailable(path: Path, problem: str) -> ModelUnavailable:
    return ModelUnavailable(
        f"the embedding model is unusable: {path} {problem}; reinstall feral, or set "
        f'memory.embedder to "none" in settings.json to run without vector search'
    )


def _read_config(directory: Path) -> dict[str, Any]:
    path = directory / CONFIG_FILE
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise _unavailable(path, "is missing") from exc
    except OSError as exc:
        raise _unavailable(path, f"cannot be read ({exc.strerror or exc})") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _unavailable(path, "is not valid JSON") from exc
    if not isinstance(config, dict):
        raise _unavailable(path, "is not a JSON object")
    return config


def _check_digest(path: Path, expected: object) -> None:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as file:
            while chunk := file.read(1 << 20):
                digest.update(chunk)
    except FileNotFoundError as exc:
        raise _unavailable(path, "is missing") from exc
    except OSError as exc:
        raise _unavailable(path, f"cannot be read ({exc.strerror or exc})") from exc
    if digest.hexdigest() != expected:
        raise _unavailable(path, "is damaged (its SHA-256 differs from config.json's)")


def _read_tokenizer(path: Path, max_tokens: int) -> Tokenizer:
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises plain Exception for a bad file
        raise _unavailable(path, f"is not a tokenizer ({exc})") from exc
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_tokens)
    return tokenizer


def _read_matrix(path: Path) -> npt.NDArray[np.floating[Any]]:
    import numpy as np

    try:
        matrix = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise _unavailable(path, f"is not a numpy matrix ({exc})") from exc
    if matrix.ndim != 2 or matrix.dtype not in (np.float16, np.float32):
        raise _unavailable(path, f"holds {matrix.dtype} with shape {matrix.shape}, not a matrix")
    matrix.setflags(write=False)
    result: npt.NDArray[np.floating[Any]] = matrix
    return result
