"""Embedders for tests: deterministic, dependency-free, and never shipped in the package.

:class:`HashingEmbedder` finds shared words, not meaning, which is what a test of the vector
plumbing wants: which rows are near each other is predictable from their words.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

__all__ = ["HashingEmbedder"]


class HashingEmbedder:
    """Deterministic feature hashing of words: a stand-in for tests.

    It finds shared words, not meaning (it scores at chance on paraphrases), so a node never
    picks it as its embedder by default: with no real model the vector leg stays off.
    """

    def __init__(self, dim: int = 64) -> None:
        self._dim = dim

    @property
    def name(self) -> str:
        return f"hashing-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._one(text) for text in texts]

    def _one(self, text: str) -> list[float]:
        vector = [0.0] * self._dim
        for word in re.findall(r"\w+", text.casefold()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self._dim
            vector[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        return [x / norm for x in vector]
