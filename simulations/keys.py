"""Fake node keys for the simulated cluster: HMAC in place of Ed25519, ids shaped like real ones.

The session only needs ``sign``, ``verify`` and ``fingerprint`` to behave like a signature
scheme: a signature made with one node's secret verifies under that node's public key and no
other. HMAC-SHA512 with a per-node secret (found from the public key by the verifier) does that
deterministically and fast. Node ids are the real shape: lower-case base32 of the first 20 bytes
of SHA-256 of the public key, 32 characters of ``a-z2-7`` (so ``check_node_id`` accepts them).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass, field

from feral.sync.delta import check_node_id
from feral.sync.types import NodeId

__all__ = ["FakeKeys", "KeyPair", "fingerprint"]


def fingerprint(public_key: bytes) -> NodeId:
    """The node id of a public key, computed like sync.ids.node_id_for but for any length."""
    digest = hashlib.sha256(public_key).digest()[:20]
    return check_node_id(base64.b32encode(digest).decode("ascii").lower())


@dataclass(frozen=True)
class KeyPair:
    """One node's fake key pair."""

    public: bytes
    secret: bytes
    node_id: NodeId = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "node_id", fingerprint(self.public))

    def sign(self, data: bytes) -> bytes:
        return hmac.new(self.secret, data, hashlib.sha512).digest()


class FakeKeys:
    """The cluster's key registry: makes key pairs and verifies signatures against them."""

    def __init__(self) -> None:
        self._secrets: dict[bytes, bytes] = {}

    def new(self, seed: str) -> KeyPair:
        """A key pair derived from ``seed`` (the same seed always gives the same node id)."""
        pair = KeyPair(
            hashlib.sha256(b"public:" + seed.encode()).digest(),
            hashlib.sha256(b"secret:" + seed.encode()).digest(),
        )
        self._secrets[pair.public] = pair.secret
        return pair

    def verify(self, public_key: bytes, data: bytes, signature: bytes) -> bool:
        secret = self._secrets.get(public_key)
        if secret is None:
            return False
        return hmac.compare_digest(KeyPair(public_key, secret).sign(data), signature)
