"""Row ids that never collide across devices.

Episodes and execution-log entries get a ULID (48 bits of milliseconds, 80 random bits, Crockford
base32): sortable by creation time and unique without coordination. Facts get an id derived from
their normalised content, so the same fact remembered on two offline devices is one row after
they sync (DESIGN §2) and last-write-wins settles its confidence and archive flag.
"""

from __future__ import annotations

import base64
import hashlib
import unicodedata

from .delta import check_node_id
from .errors import SchemaError
from .types import NodeId, RowId

__all__ = [
    "FINGERPRINT_LENGTH",
    "PUBLIC_KEY_LENGTH",
    "caseless",
    "edge_id",
    "entity_id",
    "fact_id",
    "new_ulid",
    "node_id_for",
    "normalise",
    "reborn_id",
]

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_sha256 = hashlib.sha256


def new_ulid(now_ms: int, random80: bytes) -> RowId:
    """A ULID from a millisecond time and 10 random bytes (both injected, so tests can fix them)."""
    if len(random80) != 10:
        raise ValueError("a ULID needs exactly 10 random bytes")
    value = ((now_ms & ((1 << 48) - 1)) << 80) | int.from_bytes(random80, "big")
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return RowId("".join(reversed(chars)))


def normalise(text: str) -> str:
    """The one normalisation every node applies before comparing or hashing text.

    Canonical caseless form (Unicode D145: NFD, case fold, then NFC again, because folding can
    leave a decomposed sequence, as in "ΐ" against "Ϊ́"), whitespace collapsed and stripped.

    For ASCII text the three steps of :func:`caseless` equal ``lower()``: the common case, and
    about 15% quicker that way (kept for speed; tests/sync/test_fast_paths.py holds the two to
    the same result). :func:`fact_id` hashes what this returns, so facts share the shortcut.
    """
    folded = text.lower() if text.isascii() else caseless(text)
    return " ".join(folded.split())


def caseless(text: str) -> str:
    """Unicode's canonical caseless form (D145) of ``text``, whitespace left as it is."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).casefold())


def fact_id(subject: str, predicate: str, obj: str) -> RowId:
    """The id of a knowledge-graph triple, derived from its normalised content.

    Raises:
        SchemaError: the text is not valid Unicode (a lone surrogate, e.g. from undecodable
            command-line bytes), so it could be neither hashed nor stored.
    """
    key = f"{normalise(subject)}\x1f{normalise(predicate)}\x1f{normalise(obj)}"
    try:
        encoded = key.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SchemaError("a fact's text is not valid Unicode") from exc
    return RowId("f" + _sha256(encoded).hexdigest()[:31])


def _derived(prefix: str, *parts: str) -> RowId:
    key = "\x1f".join(parts)
    try:
        encoded = key.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SchemaError("an id's text is not valid Unicode") from exc
    return RowId(prefix + _sha256(encoded).hexdigest()[:31])


def reborn_id(row_id: str) -> RowId:
    """The id the same content takes when it is written again after a nuke of ``row_id``.

    A tombstone wins over every write of its row (sync/merge.py), so writing the content again
    needs a row of its own; deriving its id from the dead one means two devices that both saw
    the nuke and both write the content again still make one row.
    """
    return _derived(row_id[:1], row_id, "written again after a nuke")


def edge_id(edge_type: str, from_id: str, to_id: str) -> RowId:
    """The id of a typed edge between two memories: the same link made on two devices is one row.

    Derived from the type and both endpoints (ids are compared exactly, types normalised), so
    linking A to B twice, or on two offline devices, writes one row that last-write-wins settles.
    """
    return _derived("e", normalise(edge_type), from_id, to_id)


def entity_id(entity_type: str, name: str) -> RowId:
    """The id of an entity: one per normalised name and type, wherever it was first named."""
    return _derived("n", normalise(entity_type), normalise(name))


PUBLIC_KEY_LENGTH = 32
"""Bytes in a raw Ed25519 public key (RFC 8032)."""

FINGERPRINT_LENGTH = 20
"""Bytes of SHA-256 kept for a node id: 160 bits, which base32 spells in exactly 32 characters."""


def node_id_for(public_key_raw: bytes) -> NodeId:
    """The node id of a raw Ed25519 public key (Syncthing's model: the id is the key's hash).

    Returns:
        Lower-case base32 (no padding) of the first 20 bytes of SHA-256(public key).

    Raises:
        ValueError: the key is not 32 bytes. Peer code checks lengths before asking for an id.
    """
    if len(public_key_raw) != PUBLIC_KEY_LENGTH:
        raise ValueError(
            f"an Ed25519 public key has {PUBLIC_KEY_LENGTH} bytes, not {len(public_key_raw)}"
        )
    digest = hashlib.sha256(public_key_raw).digest()[:FINGERPRINT_LENGTH]
    return check_node_id(base64.b32encode(digest).decode("ascii").lower())
