"""Storage errors, beneath ``FeralError`` (the tree and its codes are drawn in sync/errors.py).

Each class carries its ``code`` as the classes in sync/errors.py do; tests/sync/test_errors.py
checks them against the drawing. The API's status and the CLI's exit status for each are mapped
at those edges (node/api/errors.py, cli/context.py).
"""

from __future__ import annotations

from feral.sync.errors import FeralError

__all__ = [
    "CorruptDatabase",
    "EmbeddingError",
    "MigrationError",
    "ModelUnavailable",
    "NewerDatabase",
    "StorageError",
]


class StorageError(FeralError):
    """The database refused an operation or cannot be used."""

    code = "storage_error"


class MigrationError(StorageError):
    """A schema migration failed; the database was left at the previous step."""


class NewerDatabase(StorageError):
    """The database was written by a newer schema than this code knows: never opened, never
    downgraded (storage/db/migrations.py)."""


class ModelUnavailable(StorageError):
    """A shipped embedding model, or the runtime it needs, is missing or damaged.

    See storage/encoders/embedders.py; the message names the file and the way out."""


class CorruptDatabase(StorageError):
    """The database file fails SQLite's integrity check or is not a database at all."""


class EmbeddingError(StorageError):
    """An embedder's vector that cannot be stored: the wrong size, or NaN or infinity."""
