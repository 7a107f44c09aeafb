"""Imports flow cli → node → storage → sync only (DESIGN §3); sync/ stays pure."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN = {
    "sync": {
        "asyncio", "sqlite3", "sqlean", "aiosqlite", "sqlite_vec", "websockets", "click",
        "uvloop", "socket", "storage", "node", "cli", "simulations", "time", "random",
    },
    "storage": {"node", "cli", "click", "websockets", "uvloop", "simulations"},
    "node": {"cli", "click", "simulations"},
    "cli": {"simulations"},
    "simulations": {"node", "cli", "websockets", "click"},
}  # fmt: skip


def imported_modules(path: Path) -> set[str]:
    """Top-level names of every module imported by the file at ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def package_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_only_downward(package):
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_modules(path) & FORBIDDEN[package])
        for path in package_files(package)
    }
    assert {p: bad for p, bad in offenders.items() if bad} == {}


def test_the_layer_check_sees_every_package():
    for package in FORBIDDEN:
        assert package_files(package), f"{package}/ has no modules to check"


def test_the_layer_check_catches_an_upward_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import asyncio\nfrom storage.store import Store\n", encoding="utf-8")
    assert imported_modules(bad) & FORBIDDEN["sync"] == {"asyncio", "storage"}
