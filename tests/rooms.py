"""The rooms of feral and what each may import: written down once, read by the layer test
(tests/test_layers.py) and the architecture diagram's test (tests/test_architecture_doc.py).

A room is a subpackage of a layer by capability (``node/absorb/`` is ``node.absorb``); the
modules at a layer's own top (``node/node_kernel.py``, ``storage/store.py``, ``cli/main.py``) form
the layer's root room, named like the layer (``node``: the kernel). Within a layer a room may import
the rooms :data:`ROOMS` lists for it and, through them, what those may import (so a room may skip
the rooms between); across layers the layer rule holds (cli → node → storage → sync). The
package itself (``import feral`` for ``__version__``, node/root/) belongs to no room.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("cli", "node", "storage", "sync")
"""The layers, top first: each may import the ones after it."""

ROOMS: dict[str, set[str]] = {
    "cli": set(),
    "cli.memory": {"cli"},
    "cli.sync": {"cli", "cli.memory"},
    "node.home": set(),
    "node.settings": {"node.home"},
    "node.secrets": set(),
    "node": {"node.settings", "node.secrets"},
    "node.absorb": {"node"},
    "node.recall": {"node.absorb"},
    "node.assistant": {"node.absorb"},
    "node.curation": {"node.recall"},
    "node.node": {"node.curation", "node.assistant"},
    "node.links": {"node"},
    "node.library": {"node.node"},
    "node.api": {"node.node", "node.links"},
    "node.mcp": {"node.api"},
    "node.serve": {"node.mcp"},
    "storage.db": set(),
    "storage.vectors": {"storage.db"},
    "storage.encoders": {"storage.vectors"},
    "storage.log": {"storage.vectors"},
    "storage.memory": {"storage.log"},
    "storage.search": {"storage.memory"},
    "storage.absorb": {"storage.search"},
    "storage": {"storage.log"},
    "storage.link": {"storage"},
    "sync": set(),
}
"""Per room, the rooms of its own layer it may import directly (the arrows of the diagram)."""

NOT_YET: set[tuple[str, str]] = set()
"""Imports against :data:`ROOMS` that stand until they are turned round, each drawn dotted in
docs/ARCHITECTURE.md; each must still exist, so the list only shrinks. Empty since the kernel
stopped calling its features (issue 26, item 1): they take node/kernel.py's protocol, and the
``Node`` of ``node.node`` (node/node/) puts kernel and features together."""


def module_name(path: Path, root: Path = ROOT) -> str:
    """``node/absorb/pipeline.py`` → ``feral.node.absorb.pipeline`` (a package by its folder)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["feral", *parts])


def room_of(module: str, root: Path = ROOT) -> str | None:
    """The room a ``feral.…`` module belongs to; None for ``feral`` itself and for others."""
    parts = module.split(".")
    if parts[0] != "feral" or len(parts) < 2 or parts[1] not in LAYERS:
        return None
    if len(parts) > 2 and (root / parts[1] / parts[2] / "__init__.py").is_file():
        return f"{parts[1]}.{parts[2]}"
    return parts[1]


def imported(path: Path, root: Path = ROOT) -> Iterable[str]:
    """Every ``feral`` module or name the file imports, relative imports resolved, imports
    inside functions and under ``TYPE_CHECKING`` included (a cycle is a cycle either way)."""
    module = module_name(path, root)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            yield from (f"{base}.{alias.name}" for alias in node.names)


def room_imports(root: Path = ROOT) -> dict[tuple[str, str], str]:
    """Every import from one room into another, with a file that makes it."""
    edges: dict[tuple[str, str], str] = {}
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            relative = path.relative_to(root)
            if relative.parts[:2] == ("node", "root") or "models" in relative.parts[:-1]:
                continue  # the package itself, and the scripts that made the models
            source = room_of(module_name(path, root), root)
            for name in imported(path, root):
                target = room_of(name, root)
                if source and target and target != source:
                    edges.setdefault((source, target), str(relative))
    return edges


def closure(arrows: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """The transitive closure of ``arrows``: a room may skip the ones between."""
    reach = set(arrows)
    while True:
        wider = reach | {(a, d) for a, b in reach for c, d in reach if b == c}
        if wider == reach:
            return reach
        reach = wider


def layer(room: str) -> str:
    return room.split(".")[0]


def room_problems(edges: dict[tuple[str, str], str], rooms: dict[str, set[str]] = ROOMS,
                  not_yet: set[tuple[str, str]] = NOT_YET) -> list[str]:  # fmt: skip
    """What ``edges`` (room imports) break: an import upwards or sideways within a layer that
    :data:`ROOMS` does not allow, a room missing from the table, a cycle in the table, or an
    exception in :data:`NOT_YET` that no longer exists."""
    allowed = closure((a, b) for a, targets in rooms.items() for b in targets)
    against = [(a, b) for a, b in sorted(edges) if layer(a) == layer(b) and (a, b) not in allowed]
    found = [f"{a} -> {b} ({edges[a, b]}) is not allowed" for a, b in against
             if (a, b) not in not_yet]  # fmt: skip
    found += [f"{r} is not in the rooms table" for r in sorted({r for e in edges for r in e})
              if r not in rooms]  # fmt: skip
    found += [f"cycle through {a}" for a, b in sorted(allowed) if a == b]
    found += [f"{a} -> {b} is listed as not yet inverted but no longer imported"
              for a, b in sorted(not_yet - set(edges))]  # fmt: skip
    return found
