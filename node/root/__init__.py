"""feral: a local-first memory store for AI assistants that syncs a person's devices.

This file is the ``feral`` package itself. The repository keeps its top level fixed (``node/``,
``sync/``, ``storage/``, ``cli/`` side by side), so pyproject.toml's ``package-dir`` installs this
folder as ``feral/`` and those four as ``feral.node``, ``feral.sync``, ``feral.storage`` and
``feral.cli``: one top-level name in site-packages, nothing generic (``cli``, ``storage``) to clash
with another distribution, and nothing a ``sync.py`` in the working directory can shadow.
"""

from __future__ import annotations

TYPE_CHECKING = False
"""True for type checkers only (mypy reads any name ``TYPE_CHECKING`` so): importing ``typing``
for it would cost every ``feral`` command, ``feral --help`` included, about 18 ms."""
if TYPE_CHECKING:
    from feral.node.library.memory import Memory

__all__ = ["Memory", "__version__"]

__version__ = "0.1.0"
"""The release, read by pyproject.toml (``dynamic = ["version"]``) so it is written once."""


def __getattr__(name: str) -> object:
    """``feral.Memory`` (node/library/memory.py), imported on first use: ``import feral`` stays
    light, and reading the version loads no store."""
    if name == "Memory":
        from feral.node.library.memory import Memory

        return Memory
    raise AttributeError(f"module 'feral' has no attribute {name!r}")
