"""docs/PROTOCOL.md's state diagram of a sync session, checked against the session's code
(issue 26, item 6).

The diagram is a mermaid ``stateDiagram-v2``. Its top-level states must be the members of
``State`` (sync/framed_link.py), and each top-level transition into a state must be labelled with
the method that assigns that state, exactly as the code does it: no assignment missing, none
drawn that the code does not make. Every code-like name in a label (a method, a field, a message
or an event) must exist in the session's code, and every message and event the session handles
or raises must be drawn, so the picture can neither show what the code does not do nor hide what
it does.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "PROTOCOL.md"
SESSION_CODE = [
    ROOT / "sync" / name for name in ("framed_link.py", "session.py", "snapshot.py", "round.py")
]
NAMES_CODE = [
    *SESSION_CODE,
    ROOT / "sync" / "messages.py",
    ROOT / "sync" / "events.py",
    ROOT / "sync" / "invitation.py",
    ROOT / "sync" / "snapshot_messages.py",
    ROOT / "sync" / "delta.py",
]
START = "[*]"

Edge = tuple[str, str, str]
"""``(source, target, label)`` of one arrow."""


def state_diagram(doc: str) -> str:
    """The text of the first ``stateDiagram`` mermaid block."""
    block = re.search(r"```mermaid\n(stateDiagram.*?)```", doc, re.S)
    assert block is not None, "no mermaid stateDiagram block"
    return block[1]


def diagram_edges(diagram: str) -> tuple[list[Edge], list[Edge]]:
    """The arrows outside any composite state, and those inside one."""
    arrow = re.compile(r"^\s*(\[\*\]|\w+)\s*-->\s*(\[\*\]|\w+)\s*(?::\s*(.*))?$")
    top: list[Edge] = []
    inner: list[Edge] = []
    depth = 0
    for line in diagram.splitlines():
        if line.strip().endswith("{"):
            depth += 1
        elif line.strip() == "}":
            depth -= 1
        elif found := arrow.match(line):
            (inner if depth else top).append((found[1], found[2], (found[3] or "").strip()))
    return top, inner


def label_names(label: str) -> list[str]:
    """The names a label lists, comma-separated."""
    return [name.strip() for name in label.split(",") if name.strip()]


def trees(paths: list[Path]) -> list[ast.Module]:
    return [ast.parse(path.read_text(encoding="utf-8")) for path in paths]


def state_members(modules: list[ast.Module]) -> set[str]:
    """The members of the ``State`` enum."""
    for module in modules:
        for node in ast.walk(module):
            if isinstance(node, ast.ClassDef) and node.name == "State":
                return {
                    target.id
                    for statement in node.body
                    if isinstance(statement, ast.Assign)
                    for target in statement.targets
                    if isinstance(target, ast.Name)
                }
    raise AssertionError("no State enum")


def state_assignments(modules: list[ast.Module]) -> set[tuple[str, str]]:
    """``(state, method)`` for each ``self.state = State.X`` in a method."""
    found = set()
    for module in modules:
        for function in ast.walk(module):
            if not isinstance(function, ast.FunctionDef):
                continue
            for node in ast.walk(function):
                if (
                    isinstance(node, ast.Assign)
                    and any(ast.unparse(target) == "self.state" for target in node.targets)
                    and ast.unparse(node.value).startswith("State.")
                ):
                    found.add((ast.unparse(node.value).removeprefix("State."), function.name))
    return found


def defined_names(modules: list[ast.Module]) -> set[str]:
    """Classes, functions, methods and attributes (``self.x``) the modules define."""
    names: set[str] = set()
    for module in modules:
        for node in ast.walk(module):
            if isinstance(node, ast.ClassDef | ast.FunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and ast.unparse(node.value) == "self":
                names.add(node.attr)
    return names


def handled_and_raised(modules: list[ast.Module]) -> set[str]:
    """The messages the session tells apart (``isinstance(message, X)``) and the events it
    raises (``self._events.append(X(...))``)."""
    found: set[str] = set()
    for module in modules:
        for node in ast.walk(module):
            if not isinstance(node, ast.Call):
                continue
            callee = ast.unparse(node.func)
            if callee == "isinstance" and len(node.args) == 2:
                found.add(ast.unparse(node.args[1]))
            elif callee == "self._events.append" and isinstance(node.args[0], ast.Call):
                found.add(ast.unparse(node.args[0].func))
    return {name for name in found if re.fullmatch(r"[A-Z]\w*", name)}


def problems(doc: str, session: list[ast.Module], named: list[ast.Module]) -> list[str]:
    """What the diagram gets wrong about the session's code."""
    top, inner = diagram_edges(state_diagram(doc))
    members = state_members(session)
    drawn_states = {name for edge in top for name in edge[:2]} - {START}
    found = [f"state {s} is not drawn" for s in sorted(members - drawn_states)]
    found += [f"state {s} is not in State" for s in sorted(drawn_states - members)]
    drawn = {(target, label_names(label)[0]) for _, target, label in top if target != START}
    made = state_assignments(session)
    found += [f"{m}() sets {s}: not drawn" for s, m in sorted(made - drawn)]
    found += [f"drawn {s} by {m}: the code does not" for s, m in sorted(drawn - made)]
    known = defined_names(named)
    labels = [name for *_, label in top + inner for name in label_names(label)]
    found += [f"{name}: no such name in the code" for name in sorted(set(labels) - known)]
    missing = handled_and_raised(session) - set(labels)
    found += [f"{name} is handled or raised, not drawn" for name in sorted(missing)]
    return found


def test_the_session_state_diagram_matches_the_code() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert problems(doc, trees(SESSION_CODE), trees(NAMES_CODE)) == []


SESSION = """
class Hello: ...

class Opened: ...

class State:
    HANDSHAKE = 0
    OPEN = 1
    CLOSED = 3

class Session:
    def __init__(self):
        self.state = State.HANDSHAKE
    def _open(self):
        self.state = State.OPEN
        self._events.append(Opened())
    def receive_eof(self):
        self.state = State.CLOSED
    def receive(self, message):
        if isinstance(message, Hello):
            pass
"""


def test_the_diagram_check_catches_a_stale_or_missing_transition() -> None:
    session = [ast.parse(SESSION)]
    doc = "```mermaid\nstateDiagram-v2\n    [*] --> HANDSHAKE: __init__, Hello\n"
    doc += "    HANDSHAKE --> OPEN: _receive_auth\n    OPEN --> GONE: receive_eof\n"
    doc += "    state OPEN {\n        [*] --> Idle: Opened, renamed_method\n    }\n```\n"
    assert problems(doc, session, session) == [
        "state CLOSED is not drawn",
        "state GONE is not in State",
        "receive_eof() sets CLOSED: not drawn",
        "_open() sets OPEN: not drawn",
        "drawn GONE by receive_eof: the code does not",
        "drawn OPEN by _receive_auth: the code does not",
        "_receive_auth: no such name in the code",
        "renamed_method: no such name in the code",
    ]


def test_the_diagram_check_catches_a_message_left_out() -> None:
    session = [ast.parse(SESSION)]
    doc = "```mermaid\nstateDiagram-v2\n    [*] --> HANDSHAKE: __init__\n"
    doc += "    HANDSHAKE --> OPEN: _open, Opened\n    OPEN --> CLOSED: receive_eof\n```\n"
    assert problems(doc, session, session) == ["Hello is handled or raised, not drawn"]


SPECS = {"PROTOCOL": ROOT / "docs" / "PROTOCOL.md", "REPLICATION": ROOT / "docs" / "REPLICATION.md"}
CITATION = re.compile(
    r'(?:\b(PROTOCOL|REPLICATION|DESIGN)(?:\.md)?\s+)?§(\d+(?:\.\d+)?)(?:, "([^"]+)")?'
)


def sections(doc: str) -> set[str]:
    """The numbers of a doc's numbered headings: ``## 7. ...`` is ``7``, ``### 1.1 ...`` ``1.1``."""
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", doc, re.M))


def stale_citations(text: str, cited_here: str | None, specs: dict[str, str]) -> list[str]:
    """The citations of the two specs' sections in ``text`` that name no section (or, quoted,
    a name the doc does not hold). A bare ``§n`` cites ``cited_here``, the doc itself."""
    found = []
    for citation in CITATION.finditer(text):
        spec = citation[1] or cited_here
        if spec not in specs:
            continue
        doc = specs[spec]
        name = " ".join((citation[3] or "").split())
        if citation[2] not in sections(doc) or name not in " ".join(doc.split()):
            found.append(f"{spec} §{citation[2]}" + (f', "{name}"' if name else ""))
    return found


def citing_files() -> list[Path]:
    folders = ["cli", "node", "storage", "sync", "simulations", "tests", "benchmarks", "docs"]
    files = [ROOT / "README.md", *(p for f in folders for p in (ROOT / f).rglob("*.py"))]
    files += [p for f in folders for p in (ROOT / f).rglob("*.md")]
    return [path for path in files if path != Path(__file__)]  # its examples cite stale ones


def test_every_citation_of_the_specs_names_a_section_they_have() -> None:
    specs = {name: path.read_text(encoding="utf-8") for name, path in SPECS.items()}
    here = {path: name for name, path in SPECS.items()}
    stale = {
        str(path.relative_to(ROOT)): found
        for path in citing_files()
        if (found := stale_citations(path.read_text(encoding="utf-8"), here.get(path), specs))
    }
    assert stale == {}


def test_the_citation_check_catches_a_moved_section() -> None:
    specs = {"PROTOCOL": "## 7. Catching up\n\n### Snapshots on the wire\n", "REPLICATION": ""}
    text = 'docs/PROTOCOL.md §7, "Snapshots on the wire"; PROTOCOL §7.1; §8; DESIGN §4; see §7'
    assert stale_citations(text, "PROTOCOL", specs) == ["PROTOCOL §7.1", "PROTOCOL §8"]
    assert stale_citations('PROTOCOL.md §7, "Pruning"', None, specs) == ['PROTOCOL §7, "Pruning"']
