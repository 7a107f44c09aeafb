"""docs/ARCHITECTURE.md's diagram of the layers, checked against the imports (issue 26, item 6).

The diagram is a mermaid ``flowchart`` whose arrows mean "may import". Every import from one
top-level folder into another must follow the arrows (directly or by skipping a layer), and
every arrow must be an import that exists, so the picture can neither allow what the code does
not do nor hide what it does.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
FOLDERS = ("cli", "node", "storage", "sync", "simulations")
"""The code folders; ``feral.<folder>`` for the four the package maps, ``simulations`` as is."""

Edge = tuple[str, str]


def drawn_edges(doc: str) -> set[Edge]:
    """The arrows of the first mermaid block: ``a["label"] --> b`` is ``("a", "b")``."""
    block = re.search(r"```mermaid\n(.*?)```", doc, re.S)
    assert block is not None, "no mermaid block"
    arrow = re.compile(r"(\w+)(?:\[[^\]]*\])?\s*-->\s*(\w+)")
    return {(m[1], m[2]) for line in block[1].splitlines() for m in arrow.finditer(line)}


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
    """Every import from one folder into another, with a file that makes it."""
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
                    edges.setdefault((folder, target), str(path.relative_to(root)))
    return edges


def allowed(drawn: set[Edge]) -> set[Edge]:
    """The transitive closure of the arrows: a layer may skip the ones between."""
    closure = set(drawn)
    while True:
        wider = closure | {(a, d) for a, b in closure for c, d in closure if b == c}
        if wider == closure:
            return closure
        closure = wider


def problems(doc: str, edges: dict[Edge, str]) -> list[str]:
    """What the diagram gets wrong about ``edges``: an import against the arrows, an arrow no
    import makes, a folder missing, or a cycle."""
    drawn = drawn_edges(doc)
    found = [f"{a} -> {b} ({edges[a, b]}) is not in the diagram" for a, b in sorted(edges)
             if (a, b) not in allowed(drawn)]  # fmt: skip
    found += [f"arrow {a} --> {b}: no such import" for a, b in sorted(drawn - set(edges))]
    found += [f"{f}/ is not drawn" for f in FOLDERS if not any(f in edge for edge in drawn)]
    found += [f"cycle through {a}" for a, b in sorted(allowed(drawn)) if a == b]
    return found


def test_the_architecture_diagram_matches_the_imports() -> None:
    assert problems(DOC.read_text(encoding="utf-8"), import_edges(ROOT)) == []


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
    doc = "```mermaid\nflowchart LR\n  cli --> node\n  node --> storage\n  storage --> sync\n"
    doc += "  simulations --> storage\n```\n"
    assert problems(doc, import_edges(tmp_path)) == [
        "sync -> node (sync/d.py) is not in the diagram"
    ]


def test_the_diagram_check_catches_a_stale_arrow_and_a_cycle() -> None:
    doc = "```mermaid\nflowchart LR\n  cli --> node\n  node --> cli\n```\n"
    edges = {("cli", "node"): "cli/a.py"}
    assert problems(doc, edges) == [
        "arrow node --> cli: no such import",
        "storage/ is not drawn",
        "sync/ is not drawn",
        "simulations/ is not drawn",
        "cycle through cli",
        "cycle through node",
    ]
