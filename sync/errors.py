"""One exception tree for the whole project, rooted here so every layer can raise and catch it.

Each class says what went wrong: its kind, and the stable ``code`` the API's answer carries
(``{"error": {"code", "message"}}``). How each edge answers a kind is the edge's own: the API
maps kinds to HTTP statuses (node/api/errors.py), the ``feral`` command to exit statuses
(cli/context.py), each by a table resolved through the class's MRO, so a kind answered as its
parent is has no row there. A kind declared in a higher layer (storage/db/errors.py) hangs from
this tree too; a kind whose code is its parent's declares none and inherits it.

The tree (tests/sync/test_errors.py holds the classes to it, row by row)::

    kind                          code
    FeralError                    refused
    ├── DecodeError               refused
    ├── ProtocolError             invalid_value
    │   └── SchemaError           invalid_value
    ├── ClockError                refused
    │   └── ClockSkewError        refused
    ├── AuthError                 refused
    ├── ConfigError               bad_settings
    ├── InvalidArgument           invalid_argument
    ├── InvalidInput              invalid_input
    │   └── SecretRefused         secret_refused
    ├── NotAvailable              not_available
    ├── NotFoundError             not_found
    │   └── PathRefused           not_found
    ├── HomeFileError             home_file
    ├── ServeRefusal              refused
    └── StorageError              storage_error
        ├── MigrationError        storage_error
        ├── ModelUnavailable      storage_error
        ├── CorruptDatabase       storage_error
        ├── NewerDatabase         storage_error
        └── EmbeddingError        storage_error

What each kind stands for:

- DecodeError: bytes that are not a valid message or delta.
- ProtocolError: a well-formed message that breaks the rules, or a value storage refuses.
- SchemaError: a delta naming an unknown table or column, or a wrongly typed value.
- ClockError: a clock that cannot produce or accept a stamp; ClockSkewError: a remote stamp too
  far ahead of our wall clock.
- AuthError: a peer that cannot prove who it is, or is not paired.
- ConfigError: a settings file, or a setting given another way (an environment variable), that
  cannot be used; the message names the key.
- InvalidArgument: a value given to a command or a call that it does not take, past the checks
  at the edge (click's option types, the API's declared bodies), which refuse first.
- InvalidInput: a file handed to feral (an import, a transcript) that cannot be read or holds a
  malformed line; the message names the line. SecretRefused (node/secrets/scan.py): text that
  holds what looks like a secret, never stored; the message names the kind, never the value.
- NotAvailable: something this node cannot do as configured (vector search with no model).
- NotFoundError: an id or name that names nothing; PathRefused: a name that is a path, or a
  page that leads outside the node's home, refused (to a caller: there is no such page).
- HomeFileError: a file in the node's home (keys, the clock mark, wiki pages, the API token)
  that cannot be read, written or used.
- ServeRefusal (cli/serve_handoff.py): a refusal by the node behind a running ``feral serve``
  that a command handed its work to (a secret, a failing store), printed as the command's own.
- StorageError (storage/db/errors.py): the database refused or is damaged, the embedding model is
  missing, or an embedder's vector cannot be stored.

Third-party errors are translated at each layer boundary with ``raise ... from exc``.
"""

from __future__ import annotations

from typing import ClassVar

from .units import format_ms, short_id

__all__ = [
    "AuthError",
    "ClockError",
    "ClockSkewError",
    "ConfigError",
    "DecodeError",
    "FeralError",
    "HomeFileError",
    "InvalidArgument",
    "InvalidInput",
    "NotAvailable",
    "NotFoundError",
    "PathRefused",
    "ProtocolError",
    "SchemaError",
]


class FeralError(Exception):
    """Root of every error feral raises on purpose; raise a kind beneath it, not this."""

    code: ClassVar[str] = "refused"
    """The stable ``error.code`` of the API's answer: what went wrong, for a program to read."""


class DecodeError(FeralError):
    """Bytes that do not decode to a valid message, page or delta."""


class ProtocolError(FeralError):
    """A decodable message that breaks the protocol's rules."""

    code = "invalid_value"


class SchemaError(ProtocolError):
    """A delta naming a table or column the schema lacks, or holding a wrongly typed value."""


class ClockError(FeralError):
    """A clock that cannot produce a stamp (for example, it has drifted too far ahead)."""


class ClockSkewError(ClockError):
    """A remote stamp further ahead of local wall time than received stamps may be.

    The message names the device whose clock is off, the origin that stamped the entry, and,
    when another peer passed it on, that relay too: blaming the relay would send the user to
    fix a clock that is right (issue 11).

    Attributes:
        offset_ms: how far ahead of our wall clock the remote stamp is.
        window_ms: the skew window (received stamps may be twice that far ahead).
        peer: who sent it, when known.
        origin: who stamped it, when known.
        origin_name: the origin's name, when this node has met it.
    """

    def __init__(
        self,
        offset_ms: int,
        window_ms: int,
        peer: str | None = None,
        origin: str | None = None,
        origin_name: str = "",
    ) -> None:
        self.offset_ms = offset_ms
        self.window_ms = window_ms
        self.peer = peer
        self.origin = origin
        self.origin_name = origin_name
        super().__init__(self._describe())

    def named(self, origin_name: str) -> ClockSkewError:
        """The same refusal, with the origin's name (looked up by the caller) in the message."""
        return ClockSkewError(self.offset_ms, self.window_ms, self.peer, self.origin, origin_name)

    def _describe(self) -> str:
        ahead, window = format_ms(self.offset_ms), format_ms(self.window_ms)
        limit = f"more than twice max_clock_skew_ms ({window})"
        if self.origin is None:
            who = f" from {self.peer}" if self.peer else ""
            return f"clock skew: a stamp{who} is {ahead} ahead of this device's clock, {limit}"
        writer = short_id(self.origin)
        if self.origin_name:
            writer = f"{self.origin_name} ({writer})"
        relay = ""
        if self.peer and self.peer != self.origin:
            relay = f", relayed by {short_id(self.peer)},"
        return (
            f"clock skew: entries written by {writer}{relay} are stamped {ahead} ahead of "
            f"this device's clock, {limit}: the clock of {writer} is ahead, or was when it "
            "wrote them"
        )


class AuthError(FeralError):
    """A peer that cannot prove its identity, or that is not paired with this node."""


class ConfigError(FeralError):
    """A settings file or setting that cannot be used; the message names the key."""

    code = "bad_settings"


class InvalidArgument(FeralError):
    """A value a command or call does not take: a usage error (DESIGN §6)."""

    code = "invalid_argument"


class InvalidInput(FeralError):
    """A file handed to feral that cannot be read or holds a malformed line (named)."""

    code = "invalid_input"


class NotAvailable(FeralError):
    """Something this node cannot do as configured, such as vector search with no model."""

    code = "not_available"


class NotFoundError(FeralError):
    """An id or name that names no row, page or peer."""

    code = "not_found"


class PathRefused(NotFoundError):
    """A name that is a path, or a file that leads outside the node's home: refused.

    A kind of not-found, so a caller learns only that there is no such page.
    """


class HomeFileError(FeralError):
    """A file in the node's home (keys, clock mark, wiki, API token) unreadable or unwritable."""

    code = "home_file"
