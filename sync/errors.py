"""One exception tree for the whole project, rooted here so every layer can raise and catch it.

The tree::

    FeralError
    ├── DecodeError           bytes that are not a valid message or delta
    ├── ProtocolError         a well-formed message that breaks the rules
    │   └── SchemaError       a delta naming an unknown table or column, or a wrongly typed value
    ├── ClockError            a clock that cannot produce or accept a stamp
    │   └── ClockSkewError    a remote stamp too far ahead of our wall clock
    ├── AuthError             a peer that cannot prove who it is, or is not paired
    ├── ConfigError           a settings file or option that cannot be used
    ├── NotFoundError         an id that names nothing
    └── StorageError          (storage/errors.py) the database refused or is damaged
        ├── MigrationError
        ├── ExtensionUnavailable
        └── ModelUnavailable  the shipped embedding model is missing or damaged

Third-party errors are translated at each layer boundary with ``raise ... from exc``.
"""

from __future__ import annotations

__all__ = [
    "AuthError",
    "ClockError",
    "ClockSkewError",
    "ConfigError",
    "DecodeError",
    "FeralError",
    "NotFoundError",
    "ProtocolError",
    "SchemaError",
]


class FeralError(Exception):
    """Root of every error feral raises on purpose."""


class DecodeError(FeralError):
    """Bytes that do not decode to a valid message, page or delta."""


class ProtocolError(FeralError):
    """A decodable message that breaks the protocol's rules."""


class SchemaError(ProtocolError):
    """A delta naming a table or column the schema lacks, or holding a wrongly typed value."""


class ClockError(FeralError):
    """A clock that cannot produce a stamp (for example, it has drifted too far ahead)."""


class ClockSkewError(ClockError):
    """A remote stamp further ahead of local wall time than the skew window allows.

    Attributes:
        offset_ms: how far ahead of our wall clock the remote stamp is.
        window_ms: the window that was exceeded.
        peer: who sent it, when known.
    """

    def __init__(self, offset_ms: int, window_ms: int, peer: str | None = None) -> None:
        self.offset_ms = offset_ms
        self.window_ms = window_ms
        self.peer = peer
        who = f" from {peer}" if peer else ""
        super().__init__(
            f"clock skew: a stamp{who} is {offset_ms} ms ahead of local time "
            f"(max_clock_skew_ms is {window_ms})"
        )


class AuthError(FeralError):
    """A peer that cannot prove its identity, or that is not paired with this node."""


class ConfigError(FeralError):
    """A settings file or option that cannot be used; the message names the key."""


class NotFoundError(FeralError):
    """An id that names no row."""
