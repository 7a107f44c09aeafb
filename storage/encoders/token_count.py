"""Counting tokens with the shipped model's tokenizer, for budgets such as the digest's.

The count is the WordPiece tokenizer of the default model (all-MiniLM-L6-v2, in
``storage/encoders/models/minilm-l6-int8/tokenizer.json``), whatever ``memory.embedder`` says: a
budget must be counted the same way on every device, and this file ships with every install. Special
tokens are not counted and nothing is cut. The tokenizer is loaded on the first count (about a
quarter of a second), so commands that count nothing never pay for it, and its file is checked
against the SHA-256 in the model's ``config.json`` like the model itself.

The tokenizer splits on whitespace before anything else, so texts joined by newlines count
as the sum of their counts: :func:`count_tokens_each` lets a caller fill a budget line by line.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .embedders import DEFAULT_EMBEDDER, MODELS_DIR
from .model_files import TOKENIZER_FILE, ModelDigests, check_digest, read_config, read_tokenizer

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["count_tokens", "count_tokens_each"]

_NO_LIMIT = 1 << 30


@functools.cache
def _tokenizer() -> Tokenizer:
    directory = MODELS_DIR / DEFAULT_EMBEDDER
    digests = read_config(directory, ModelDigests).sha256
    check_digest(directory / TOKENIZER_FILE, digests.get(TOKENIZER_FILE))
    tokenizer = read_tokenizer(directory / TOKENIZER_FILE, _NO_LIMIT)
    tokenizer.no_truncation()
    return tokenizer


def count_tokens(text: str) -> int:
    """How many tokens ``text`` is (no special tokens).

    Raises:
        ModelUnavailable: the tokenizer file is missing or damaged.
    """
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


def count_tokens_each(texts: Sequence[str]) -> list[int]:
    """:func:`count_tokens` of each text, in one batch."""
    if not texts:
        return []
    encodings = _tokenizer().encode_batch(list(texts), add_special_tokens=False)
    return [len(encoding.ids) for encoding in encodings]
