"""No ``Any`` in a public signature of ``Node`` or ``feral.Memory`` (node/answers.py), nor in
what the modules of :data:`WALKED_MODULES` export: the MCP server and its tools, and what cli/
and the other rooms call across a boundary; nor at the two layer boundaries beside node/, in
what :data:`BOUNDARY_MODULES` export: storage's answers to node/ and cli/'s helpers around the
node's answers.

Every public method's parameters and answer are read as the type checker reads them, and the
walk goes inside what they name: the arguments of generics, the fields of a ``TypedDict`` and
of a dataclass answer, the bound of a type variable. An ``Any`` anywhere there (a ``dict[str,
Any]`` answer, ``**kwargs: Any``) fails, so an untyped answer cannot come back unnoticed; the
one exception left is :data:`KNOWN_ANY`.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import sys
import typing
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, TypedDict

import pytest

from feral.node.library.memory import Memory
from feral.node.node import Node
from feral.storage.memory import memories

WALKED_CLASSES = (Node, Memory)
WALKED_MODULES = (
    "feral.node.mcp.answers",
    "feral.node.mcp.common",
    "feral.node.mcp.mount",
    "feral.node.mcp.outputs",
    "feral.node.mcp.resources",
    "feral.node.mcp.server",
    "feral.node.mcp.tools_assistant",
    "feral.node.mcp.tools_graph",
    "feral.node.mcp.tools_memory",
    "feral.node.api.json_shapes",
    "feral.node.api.schema",
    "feral.node.api.routes",
    "feral.node.api.query_check",
    "feral.node.api.curation",
    "feral.node.api.graph_routes",
    "feral.node.api.conflict_routes",
    "feral.node.api.exec_log_routes",
    "feral.node.settings.config",
    "feral.node.recall.memory_lines",
    "feral.node.curation.prompt_files",
    "feral.node.curation.upkeep",
    "feral.node.curation.prune",
    "feral.node.curation.actions",
    "feral.node.links.status",
    "feral.node.library.assistant",
)
"""Modules whose exports (functions, and classes' public methods) are walked like Node's."""

BOUNDARY_MODULES = (
    "feral.storage.link.peers",
    "feral.storage.log.integrity",
    "feral.storage.log.prune",
    "feral.storage.memory.stats",
    "feral.storage.memory.listing",
    "feral.storage.encoders.model_files",
    "feral.cli.home",
    "feral.cli.output",
    "feral.cli.memory.absorb_output",
    "feral.cli.memory.memory_transfer_commands",
    "feral.cli.memory.scope_option",
)
"""Storage modules whose answers node/ turns into its own, and cli/ modules around the node's
answers: walked like :data:`WALKED_MODULES`.

Left out, and why: storage/db/connection.py's ``Cursor`` (``fetchone``/``fetchall`` answer what
sqlean's untyped cursor gives: the values of a row of any table, typed where a function reads
them); cli/context.py's and cli/lazy_group.py's click subclasses, whose ``**kwargs: Any`` and
``-> Any`` are click's own ``Group.__init__``, ``Command.main`` and ``invoke``, which an
override must accept; storage/search/query.py, whose ``Hit.extra`` the rankers fill by name."""

KNOWN_ANY: dict[int, str] = {
    id(memories.Row): "memories.Row, the rows storage hands node/: as dict[str, object] it costs "
    "55 mypy errors in 14 modules, as dict[str, Value] 58 in 12 (node/recall, storage/memory/"
    "graph.py, storage/absorb: over 40 sites), and some rows carry lists and dicts beside their "
    "columns",
}
"""Types whose ``Any`` stands for now, by identity, with why; each must still hold an ``Any``
(:func:`test_every_known_any_is_still_there`), so the list only shrinks."""


def public_methods(owner: type) -> Iterator[tuple[str, Callable[..., object]]]:
    """Each public method or property of ``owner`` (inherited ones too), as a function."""
    for name, member in inspect.getmembers(owner):
        if name.startswith("_"):
            continue
        if isinstance(member, property) and member.fget is not None:
            yield name, member.fget
        elif inspect.isfunction(member) or inspect.ismethod(member):
            yield name, member


def any_inside(hint: object, where: str, seen: set[int]) -> Iterator[str]:
    """Where ``Any`` occurs in ``hint``, following generics, TypedDicts, dataclasses and the
    bounds of type variables (but not into a type of :data:`KNOWN_ANY`)."""
    if hint is Any:
        yield where
        return
    if id(hint) in seen or id(hint) in KNOWN_ANY:
        return
    seen.add(id(hint))
    if isinstance(hint, typing.TypeVar):
        for inner in (hint.__bound__, *hint.__constraints__):
            yield from any_inside(inner, f"{where} -> {hint.__name__}", seen)
        return
    if typing.is_typeddict(hint) or (isinstance(hint, type) and dataclasses.is_dataclass(hint)):
        assert isinstance(hint, type)
        for field, inner in typing.get_type_hints(hint).items():
            yield from any_inside(inner, f"{where} -> {hint.__name__}.{field}", seen)
        return
    value = getattr(hint, "__value__", None)  # a ``type X = ...`` alias
    if value is not None:
        yield from any_inside(value, where, seen)
    for inner in typing.get_args(hint):
        yield from any_inside(inner, where, seen)


def any_in_signature(
    function: Callable[..., object], names: dict[str, object] | None = None
) -> list[str]:
    hints = typing.get_type_hints(function, localns=names)
    found: list[str] = []
    for name, hint in hints.items():
        found.extend(any_inside(hint, name, set()))
    return found


@pytest.mark.parametrize("owner", WALKED_CLASSES, ids=lambda owner: owner.__name__)
def test_no_public_method_takes_or_answers_any(owner: type) -> None:
    untyped = {
        name: found
        for name, method in public_methods(owner)
        if (found := any_in_signature(method, type_checking_names(sys.modules[method.__module__])))
    }
    assert untyped == {}


def type_checking_names(module: ModuleType) -> dict[str, object]:
    """What ``module`` imports under ``if TYPE_CHECKING:``, to read the annotations naming it."""
    names: dict[str, object] = {}
    scope = {"__name__": module.__name__, "__package__": module.__package__}
    for statement in ast.parse(inspect.getsource(module)).body:
        if isinstance(statement, ast.If) and ast.unparse(statement.test) == "TYPE_CHECKING":
            block = ast.Module(body=statement.body, type_ignores=[])
            exec(compile(block, str(module.__file__), "exec"), scope, names)
    return names


def exported(module: ModuleType) -> Iterator[tuple[str, Callable[..., object]]]:
    """Each function ``module`` exports, and each public method of a class it exports."""
    for name in module.__all__:
        member = getattr(module, name)
        if inspect.isfunction(member):
            yield name, member
        elif isinstance(member, type) and not typing.is_typeddict(member):
            for method_name, method in public_methods(member):
                if method.__module__.startswith("feral."):
                    yield f"{name}.{method_name}", method


@pytest.mark.parametrize("name", WALKED_MODULES + BOUNDARY_MODULES)
def test_no_exported_function_takes_or_answers_any(name: str) -> None:
    module = importlib.import_module(name)
    names = type_checking_names(module)
    walked = dict(exported(module))
    untyped = {
        label: found
        for label, function in walked.items()
        if (found := any_in_signature(function, names))
    }
    answers = [getattr(module, export) for export in module.__all__]
    for answer in filter(typing.is_typeddict, answers):
        if found := list(any_inside(answer, "", set())):
            untyped[answer.__name__] = found
    assert untyped == {}
    assert walked or any(map(typing.is_typeddict, answers)), f"{name} exports nothing walked"


def test_names_imported_for_the_type_checker_are_read() -> None:
    mount = importlib.import_module("feral.node.mcp.mount")
    assert type_checking_names(mount)["Node"] is Node
    assert any_in_signature(mount.LazyMcp.__init__, type_checking_names(mount)) == []


class _Inner(TypedDict):
    value: dict[str, Any]


class _Outer(TypedDict):
    items: list[_Inner]


def _answers_any_deep_inside() -> _Outer:
    raise NotImplementedError


def _takes_any(**options: Any) -> None:
    raise NotImplementedError


def test_the_walk_finds_any_inside_an_answer() -> None:
    found = any_in_signature(_answers_any_deep_inside)
    assert found == ["return -> _Outer.items -> _Inner.value"]
    assert any_in_signature(_takes_any) == ["options"]
    assert any_in_signature(lambda: None) == []


def test_every_walked_class_has_public_methods() -> None:
    for owner in WALKED_CLASSES:
        assert len(list(public_methods(owner))) >= 10


_Decorated = typing.TypeVar("_Decorated", bound=Callable[..., Any])


def _decorator_of_anything(command: _Decorated) -> _Decorated:
    raise NotImplementedError


def test_the_walk_follows_a_type_variable_to_its_bound() -> None:
    found = any_in_signature(_decorator_of_anything)
    assert found == ["command -> _Decorated", "return -> _Decorated"]


def _answers_rows() -> list[memories.Row]:
    raise NotImplementedError


def test_a_known_any_is_passed_over_and_nothing_else() -> None:
    assert any_in_signature(_answers_rows) == []
    assert list(any_inside(dict[str, Any], "", set())) == [""]  # the same shape, written anew


def test_every_known_any_is_still_there() -> None:
    """An exception whose type no longer holds ``Any`` must leave :data:`KNOWN_ANY`."""
    for known in (memories.Row,):
        assert id(known) in KNOWN_ANY
        assert Any in typing.get_args(known), KNOWN_ANY[id(known)]
