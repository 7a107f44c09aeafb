"""docs/ARCHITECTURE.md's diagram of the layers and their rooms, checked against the imports
(issue 26, items 1 and 6).

The diagram is a mermaid ``flowchart``: one subgraph per layer (``node_layer``) holding its rooms
(``node_absorb`` is ``node.absorb``, ``node`` the kernel), ``simulations`` beside them. A solid
arrow means "may import": between layers, any room of one may import any room of the other;
between rooms, the one may import the other. A dotted arrow (``-.->``) is an import that stands
until it is inverted (tests/rooms.py's ``NOT_YET``). Every import must follow the arrows (directly
or by skipping what lies between), every arrow must be an import that exists, every room must be
drawn, and the solid arrows hold no cycle: the picture can neither allow what the code does not do
nor hide what it does.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.rooms import NOT_YET, ROOMS, closure, layer, room_imports

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
FOLDERS = ("cli", "node", "storage", "sync", "simulations")
"""The code folders; ``feral.<folder>`` for the four the package maps, ``simulations`` as is."""

Edge = tuple[str, str]


def name_of(mermaid_id: str) -> str:
    """``node_layer`` → ``node/`` (a folder), ``node_absorb`` → ``node.absorb`` (a room)."""
    if mermaid_id.endswith("_layer"):
        return mermaid_id.removesuffix("_layer") + "/"
    if mermaid_id == "simulations":
        return "simulations/"
    return mermaid_id.replace("_", ".")


def mermaid_block(doc: str) -> str:
    block = re.search(r"```mermaid\n(.*?)```", doc, re.S)
    assert block is not None, "no mermaid block"
    return block[1]


def drawn_names(doc: str) -> set[str]:
    """Every folder and room the first mermaid block draws (``id["label"]`` or in an arrow)."""
    solid, dotted = drawn_edges(doc)
    declared = re.findall(r"(\w+)\[", mermaid_block(doc))
    return {name_of(i) for i in declared} | {name for edge in solid | dotted for name in edge}


def drawn_edges(doc: str) -> tuple[set[Edge], set[Edge]]:
    """The solid and the dotted arrows of the first mermaid block, by :func:`name_of`."""
    arrow = re.compile(r"(\w+)(?:\[[^\]]*\])?\s*(-->|-\.->)\s*(\w+)")
    solid: set[Edge] = set()
    dotted: set[Edge] = set()
    for line in mermaid_block(doc).splitlines():
        for m in arrow.finditer(line):
            (solid if m[2] == "-->" else dotted).add((name_of(m[1]), name_of(m[3])))
    return solid, dotted


def folder_reached(module: str, names: tuple[str, ...] = ()) -> set[str]:
    """Which code folders an import of ``module`` (``from module import names``) reaches."""
    parts = module.split(".")
    if parts[0] == "simulations":
        return {"simulations"}
    if parts[0] != "feral":
        return set()
    if len(parts) > 1:
        return {parts[1]} & set(FOLDERS)
    return set(names) & set(FOLDERS)


def import_edges(root: Path) -> dict[Edge, str]:
    """Every import from one folder into another (``node/`` → ``storage/``), with a file that
    makes it, and every import from one room into another of the same layer."""
    edges: dict[Edge, str] = {}
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                reached: set[str] = set()
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        reached |= folder_reached(alias.name)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = tuple(alias.name for alias in node.names)
                    reached |= folder_reached(node.module, names)
                for target in reached - {folder}:
                    edges.setdefault((f"{folder}/", f"{target}/"), str(path.relative_to(root)))
    rooms = room_imports(root) if all((root / f).is_dir() for f in FOLDERS[:4]) else {}
    edges.update({(a, b): where for (a, b), where in rooms.items() if layer(a) == layer(b)})
    return edges


def problems(
    doc: str, edges: dict[Edge, str], rooms: frozenset[str] = frozenset(ROOMS)
) -> list[str]:
    """What the diagram gets wrong about ``edges``: an import against the arrows, an arrow no
    import makes, a folder or room missing, or a cycle."""
    solid, dotted = drawn_edges(doc)
    allowed = closure(solid)
    found = [f"{a} -> {b} ({edges[a, b]}) is not in the diagram" for a, b in sorted(edges)
             if (a, b) not in allowed and (a, b) not in dotted]  # fmt: skip
    found += [
        f"arrow {a} --> {b}: no such import" for a, b in sorted((solid | dotted) - set(edges))
    ]
    drawn = drawn_names(doc)
    found += [f"{f}/ is not drawn" for f in FOLDERS if f"{f}/" not in drawn]
    found += [f"room {r} is not drawn" for r in sorted(rooms - drawn)]
    found += [f"cycle through {a}" for a, b in sorted(allowed) if a == b]
    return found


def test_the_architecture_diagram_matches_the_imports() -> None:
    assert problems(DOC.read_text(encoding="utf-8"), import_edges(ROOT)) == []


def test_the_diagram_draws_the_rooms_table_and_its_exceptions() -> None:
    """The picture and tests/rooms.py say the same: the rooms' arrows, and the dotted ones."""
    solid, dotted = drawn_edges(DOC.read_text(encoding="utf-8"))
    table = {(a, b) for a, targets in ROOMS.items() for b in targets}
    assert {(a, b) for a, b in solid if not a.endswith("/")} == table
    assert dotted == NOT_YET


def test_the_diagram_check_catches_an_upward_import(tmp_path: Path) -> None:
    for folder in FOLDERS:
        (tmp_path / folder).mkdir()
    (tmp_path / "cli" / "a.py").write_text("from feral.node import x\n", encoding="utf-8")
    (tmp_path / "node" / "b.py").write_text("from feral import storage\n", encoding="utf-8")
    (tmp_path / "storage" / "c.py").write_text("import feral.sync.hlc\n", encoding="utf-8")
    (tmp_path / "sync" / "d.py").write_text("from feral.node.node import Node\n", encoding="utf-8")
    (tmp_path / "simulations" / "e.py").write_text(
        "from feral.storage import s\n", encoding="utf-8"
    )
    doc = "```mermaid\nflowchart LR\n  cli_layer --> node_layer\n  node_layer --> storage_layer\n"
    doc += "  storage_layer --> sync_layer\n  simulations --> storage_layer\n```\n"
    assert problems(doc, import_edges(tmp_path), frozenset()) == [
        "sync/ -> node/ (sync/d.py) is not in the diagram"
    ]


def test_the_diagram_check_catches_a_room_import_against_the_arrows(tmp_path: Path) -> None:
    for room in ("cli", "node", "node/absorb", "node/recall", "storage", "sync", "simulations"):
        (tmp_path / room).mkdir(parents=True)
        (tmp_path / room / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "node" / "absorb" / "a.py").write_text("from ..recall import r\n", "utf-8")
    (tmp_path / "node" / "recall" / "r.py").write_text("from ..node import Node\n", "utf-8")
    doc = "```mermaid\nflowchart LR\n  node_recall --> node_absorb\n  node_absorb --> node\n"
    doc += "  node -.-> node_recall\n```\n"
    found = problems(doc, import_edges(tmp_path), frozenset({"node", "node.absorb", "node.recall"}))
    assert found[:3] == [
        "node.absorb -> node.recall (node/absorb/a.py) is not in the diagram",
        "arrow node --> node.recall: no such import",
        "arrow node.absorb --> node: no such import",
    ]


def test_the_diagram_check_catches_a_stale_arrow_and_a_cycle() -> None:
    doc = "```mermaid\nflowchart LR\n  cli_layer --> node_layer\n  node_layer --> cli_layer\n```\n"
    edges = {("cli/", "node/"): "cli/a.py"}
    assert problems(doc, edges, frozenset({"node.absorb"})) == [
        "arrow node/ --> cli/: no such import",
        "storage/ is not drawn",
        "sync/ is not drawn",
        "simulations/ is not drawn",
        "room node.absorb is not drawn",
        "cycle through cli/",
        "cycle through node/",
    ]
