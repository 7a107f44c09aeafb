"""JSON Schemas of the node's answers, made from their ``TypedDict`` annotations (node/answers.py).

Why not a library: :func:`msgspec.json.schema_components` (which makes the request schemas)
refuses a union of two ``TypedDict`` types, and a search hit's row is a fact or an episode;
pydantic refuses ``typing.TypedDict`` before Python 3.12, and the rows are storage's. What an
answer uses is small (scalars, ``Literal``, unions, lists, ``dict[str, X]``, ``TypedDict``, and
``Annotated`` bounds written with :class:`msgspec.Meta`), so it is read here, and anything else
is a ``TypeError``: a type the document cannot describe fails the first request for it (and the
tests), never turns into an empty schema.

Each ``TypedDict`` becomes a component named by its class, referred to by ``$ref``; its keys
marked ``NotRequired`` are left out of ``required``, and keys it does not name are allowed (a
graph hit carries more than a plain one), as in the rows the API always answered.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Iterable

import msgspec

__all__ = ["AnswerSchemas", "answer_schemas"]

Schema = dict[str, object]

_SCALARS: dict[object, Schema] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
}
_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


class AnswerSchemas:
    """The schemas of one document's answers: :meth:`of` gives an answer's schema, and
    :attr:`components` collects every ``TypedDict`` met on the way."""

    def __init__(self, ref_template: str) -> None:
        self.ref_template = ref_template
        self.components: dict[str, Schema] = {}

    def of(self, answer: object) -> Schema:
        """The schema of ``answer`` (a ``$ref`` for a ``TypedDict``)."""
        return _schema(answer, self.components, self.ref_template)


def answer_schemas(answers: Iterable[object], ref_template: str) -> dict[str, Schema]:
    """The components describing ``answers`` and every ``TypedDict`` they use, by class name."""
    schemas = AnswerSchemas(ref_template)
    for answer in answers:
        schemas.of(answer)
    return schemas.components


def _schema(hint: object, components: dict[str, Schema], ref: str) -> Schema:
    hint = _unwrapped(hint)
    if hint in _SCALARS:
        return dict(_SCALARS[hint])
    if typing.is_typeddict(hint):
        assert isinstance(hint, type)
        return _typed_dict(hint, components, ref)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.NotRequired, typing.Required):
        return _schema(args[0], components, ref)
    if origin is typing.Annotated:
        return {**_schema(args[0], components, ref), **_bounds(args[1:])}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_schema(arg, components, ref) for arg in args]}
    if origin in (list, tuple) and (origin is list or args[1:] == (Ellipsis,)):
        return {"type": "array", "items": _schema(args[0], components, ref)}
    if origin is dict and _unwrapped(args[0]) is str:
        return {"type": "object", "additionalProperties": _schema(args[1], components, ref)}
    value = getattr(hint, "__value__", None)  # a ``type X = ...`` alias
    if value is not None:
        return _schema(value, components, ref)
    raise TypeError(f"no JSON Schema for {hint!r} in an answer")


def _unwrapped(hint: object) -> object:
    """What a ``NewType`` (``NodeId``) stands for; any other type as it is."""
    while isinstance(hint, typing.NewType):
        hint = hint.__supertype__
    return hint


def _typed_dict(answer: type, components: dict[str, Schema], ref: str) -> Schema:
    name = answer.__name__
    if name not in components:
        components[name] = {}  # taken before its fields, so a type that holds itself ends
        hints = typing.get_type_hints(answer, include_extras=True)
        schema: Schema = {
            "title": name,
            "type": "object",
            "properties": {key: _schema(hint, components, ref) for key, hint in hints.items()},
            "required": [key for key, hint in hints.items() if _required(answer, hint)],
        }
        if answer.__doc__:
            schema["description"] = inspect.cleandoc(answer.__doc__)
        components[name] = schema
    return {"$ref": ref.format(name=name)}


def _required(answer: type, hint: object) -> bool:
    """Whether a key must be there, read from its annotation: under ``from __future__ import
    annotations`` Python 3.11 cannot see ``NotRequired`` when it makes ``__required_keys__``."""
    marked = typing.get_origin(hint)
    if marked is typing.NotRequired:
        return False
    return marked is typing.Required or getattr(answer, "__total__", True)


def _bounds(metadata: tuple[object, ...]) -> Schema:
    """The bounds and description a :class:`msgspec.Meta` puts on an annotated type."""
    found: Schema = {}
    for meta in metadata:
        if not isinstance(meta, msgspec.Meta):
            continue
        for attribute, keyword in _BOUNDS.items():
            if getattr(meta, attribute) is not None:
                found[keyword] = getattr(meta, attribute)
        if meta.description is not None:
            found["description"] = meta.description
    return found
