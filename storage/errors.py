"""Storage errors, beneath ``FeralError`` (the tree is drawn in sync/errors.py)."""

from __future__ import annotations

from feral.sync.errors import FeralError

__all__ = [
    "CorruptDatabase",
    "ExtensionUnavailable",
    "MigrationError",
    "ModelUnavailable",
    "StorageError",
]


class StorageError(FeralError):
    """The database refused an operation or cannot be used."""


class MigrationError(StorageError):
    """A schema migration failed; the database was left at the previous step."""


class ExtensionUnavailable(StorageError):
    """The SQLite build in use cannot load sqlite-vec."""


class ModelUnavailable(StorageError):
    """The embedding model shipped with feral is missing or damaged (storage/static_model.py)."""


class CorruptDatabase(StorageError):
    """The database file fails SQLite's integrity check or is not a database at all."""
