"""Imports flow cli → node → storage → sync only (DESIGN §3); sync/ stays pure; within a layer,
rooms import only as tests/rooms.py allows, with no cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.rooms import LAYERS as ROOM_LAYERS, ROOMS, room_imports, room_problems

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN = {
    "sync": {
        "asyncio", "sqlite3", "sqlean", "aiosqlite", "sqlite_vec", "websockets", "click",
        "uvloop", "socket", "feral.storage", "feral.node", "feral.cli", "simulations", "time",
        "random",
    },
    "storage": {"feral.node", "feral.cli", "click", "websockets", "uvloop", "simulations"},
    "node": {"feral.cli", "click", "simulations"},
    "cli": {"simulations"},
    "simulations": {"feral.node", "feral.cli", "websockets", "click"},
}  # fmt: skip
"""Per folder, what its modules may not import: our own layers by their second dotted name
(``feral.node``), everything else by its top-level name."""

LAYERS = {"feral.cli", "feral.node", "feral.storage", "feral.sync"}


def layer_of(module: str, imported: tuple[str, ...] = ()) -> set[str]:
    """What an import of ``module`` reaches: ``feral.<layer>`` for our own code (``from feral
    import node`` names the layer in ``imported``), else the top-level name."""
    parts = module.split(".")
    if parts[0] != "feral":
        return {parts[0]}
    if len(parts) > 1:
        return {".".join(parts[:2])}
    reached = {f"feral.{name}" for name in imported} & LAYERS
    return reached or {"feral"}


def imported_modules(path: Path) -> set[str]:
    """What every import in the file at ``path`` reaches (see :func:`layer_of`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names |= layer_of(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names |= layer_of(node.module, tuple(alias.name for alias in node.names))
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
    bad.write_text(
        "import asyncio\nfrom feral.storage.store import Store\nfrom feral import node\n"
        "import feral.cli.main\n",
        encoding="utf-8",
    )
    assert imported_modules(bad) & FORBIDDEN["sync"] == {
        "asyncio", "feral.storage", "feral.node", "feral.cli"
    }  # fmt: skip


def test_our_own_layers_are_told_apart_by_their_second_name(tmp_path):
    allowed = tmp_path / "allowed.py"
    allowed.write_text("from feral.sync.errors import FeralError\nimport feral\n", "utf-8")
    assert imported_modules(allowed) == {"feral.sync", "feral"}
    assert not imported_modules(allowed) & FORBIDDEN["storage"]


@pytest.mark.slow
def test_no_module_imports_a_layer_by_its_old_top_level_name():
    """Installed, there is no top-level ``node`` or ``storage``: only ``feral.node``."""
    old = {"node", "sync", "storage", "cli"}
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_modules(path) & old)
        for folder in [*FORBIDDEN, "tests", "benchmarks"]
        for path in package_files(folder)
    }
    assert {p: bad for p, bad in offenders.items() if bad} == {}


def test_every_room_imports_only_what_the_rooms_table_allows():
    """Rooms by capability (tests/rooms.py): no upward import and no cycle between rooms."""
    assert room_problems(room_imports()) == []


def test_every_room_folder_is_in_the_rooms_table_and_every_room_has_a_folder():
    folders = {
        f"{layer}.{init.parent.name}" if init.parent.parent.name == layer else layer
        for layer in ROOM_LAYERS
        for init in (ROOT / layer).rglob("__init__.py")
        if init.parent.name != "root"
    }
    assert folders == set(ROOMS)


def test_the_room_check_catches_an_upward_import_a_cycle_and_a_stale_exception(tmp_path):
    for room in ("node", "node/absorb", "node/recall"):
        (tmp_path / room).mkdir(parents=True)
        (tmp_path / room / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "node" / "absorb" / "a.py").write_text(
        "from ..recall.r import x\nfrom feral.node.kernel import Node\n", encoding="utf-8"
    )
    (tmp_path / "node" / "recall" / "r.py").write_text("from ..absorb import a\n", "utf-8")
    edges = room_imports(tmp_path)
    assert edges == {
        ("node.absorb", "node.recall"): "node/absorb/a.py",
        ("node.absorb", "node"): "node/absorb/a.py",
        ("node.recall", "node.absorb"): "node/recall/r.py",
    }
    rooms = {"node": set(), "node.absorb": {"node"}, "node.recall": {"node.absorb"}}
    assert room_problems(edges, rooms, {("node", "node.recall")}) == [
        "node.absorb -> node.recall (node/absorb/a.py) is not allowed",
        "node -> node.recall is listed as not yet inverted but no longer imported",
    ]
    rooms["node.absorb"].add("node.recall")
    assert room_problems(edges, rooms, set()) == [
        "cycle through node.absorb",
        "cycle through node.recall",
    ]
