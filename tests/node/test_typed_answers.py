"""No ``Any`` in a public signature of ``Node`` or ``feral.Memory`` (node/answers.py).

Every public method's parameters and answer are read as the type checker reads them, and the
walk goes inside what they name: the arguments of generics, the fields of a ``TypedDict`` and
of a dataclass answer. An ``Any`` anywhere there (a ``dict[str, Any]`` answer, ``**kwargs:
Any``) fails, so an untyped answer cannot come back unnoticed.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Iterator
from typing import Any, TypedDict

import pytest

from feral.node.library.memory import Memory
from feral.node.node import Node

WALKED_CLASSES = (Node, Memory)


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
    """Where ``Any`` occurs in ``hint``, following generics, TypedDicts and dataclasses."""
    if hint is Any:
        yield where
        return
    if id(hint) in seen:
        return
    seen.add(id(hint))
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


def any_in_signature(function: Callable[..., object]) -> list[str]:
    hints = typing.get_type_hints(function)
    found: list[str] = []
    for name, hint in hints.items():
        found.extend(any_inside(hint, name, set()))
    return found


@pytest.mark.parametrize("owner", WALKED_CLASSES, ids=lambda owner: owner.__name__)
def test_no_public_method_takes_or_answers_any(owner: type) -> None:
    untyped = {
        name: found for name, method in public_methods(owner) if (found := any_in_signature(method))
    }
    assert untyped == {}


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
