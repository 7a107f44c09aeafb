"""The ``feral`` under test is this checkout, in-process and in every process a test starts.

A pytest plugin (``-p tests.checkout`` in pyproject.toml), so it runs before any test module is
imported, for tests/ and simulations/ alike. ``pip install '.[test]'`` copies the checkout into
site-packages; an editable install (``pip install -e``) maps ``feral.*`` onto it. Either is fine
as long as what ``import feral`` finds is byte for byte what is here: otherwise the in-process
tests and the ``feral`` processes the suite starts could run a stale copy while this checkout is
what gets reported green.
"""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["ROOT", "SOURCES", "differences", "imported_folders"]

ROOT = Path(__file__).resolve().parent.parent

SOURCES = {
    "feral": ROOT / "node" / "root",
    "feral.cli": ROOT / "cli",
    "feral.node": ROOT / "node",
    "feral.storage": ROOT / "storage",
    "feral.sync": ROOT / "sync",
}
"""pyproject.toml's ``package-dir``: each installed package and the folder it comes from."""

NOT_INSTALLED = {"feral.node": ("root",), "feral.storage": ("encoders/models",)}
"""Folders beneath a package's that are not part of it: node/root is ``feral`` itself, and
storage/encoders/models holds the scripts that made the shipped models (only their data files
install)."""


def imported_folders() -> dict[str, Path]:
    """Where ``import feral`` (and each layer) is found by this interpreter."""
    import importlib

    return {name: Path(importlib.import_module(name).__file__ or "").parent for name in SOURCES}


def differences(installed: dict[str, Path] | None = None) -> list[str]:
    """Modules of the imported ``feral`` that are missing or differ from the checkout's."""
    found: list[str] = []
    folders = imported_folders() if installed is None else installed
    for name, folder in SOURCES.items():
        installed_folder = folders[name]
        for source in sorted(folder.rglob("*.py")):
            relative = source.relative_to(folder)
            if any(relative.is_relative_to(part) for part in NOT_INSTALLED.get(name, ())):
                continue
            copy = installed_folder / relative
            if not copy.is_file() or copy.read_bytes() != source.read_bytes():
                found.append(".".join([name, *relative.with_suffix("").parts]))
    return found


def pytest_configure(config: pytest.Config) -> None:
    stale = differences()
    if stale:
        raise pytest.UsageError(
            f"the installed feral is not this checkout ({', '.join(stale[:5])}"
            f"{' …' if len(stale) > 5 else ''} differ): run `python3 -m pip install '.[test]'` "
            "again, or install it editable with `-e`"
        )
