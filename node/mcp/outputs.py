"""The ``outputSchema`` each MCP tool advertises, made from the type of its answer.

A tool declares what it answers (``-> StatsAnswer``: node/answers.py and its neighbours). The SDK
would make the schema from that annotation with pydantic, which refuses ``typing.TypedDict``
before Python 3.12, and the rows inside the answers are storage's; so the schema is made by
node/api/answer_schema.py, the reader the OpenAPI document's answers come from, and the SDK is
handed :func:`structured`, a pydantic model that shows that schema and lets the answer through
as the plain dict it is: the JSON a tool answers is what it was, field for field.

The schema is written out whole, without ``$ref`` (pydantic resolves the references it is
given against its own definitions), and its root is an object, as MCP asks of an
``outputSchema``: a choice of answers (``graph_add``'s entity or fact) is an ``anyOf`` of objects.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any, ClassVar

from pydantic import GetJsonSchemaHandler, RootModel
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from feral.node.api.answer_schema import AnswerSchemas
from feral.node.api.json_shapes import readable_schema

__all__ = ["PlainAnswer", "output_schema", "structured"]

_NAME = "{name}"
"""The reference template: a ``$ref`` holds the bare name of the component it stands for."""


class PlainAnswer(RootModel[dict[str, Any]]):
    """An answer passed through unchanged (``Any``: pydantic neither checks nor converts the
    values, so the JSON is the answer's own); :func:`structured` gives each answer type its own
    subclass, whose JSON Schema is that type's."""

    answer_schema: ClassVar[JsonSchemaValue] = {"type": "object"}
    """The schema this class shows instead of its own (set on each subclass)."""

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return copy.deepcopy(cls.answer_schema)  # a copy: the SDK's schema is its own to change


@cache
def structured(answer: object) -> type[PlainAnswer]:
    """What the SDK is told a tool returns: the answer unchanged, ``answer``'s schema shown."""

    class Shown(PlainAnswer):
        answer_schema = output_schema(answer)

    Shown.__name__ = Shown.__qualname__ = _title(answer)
    return Shown


def output_schema(answer: object) -> dict[str, object]:
    """The JSON Schema of ``answer`` (a ``TypedDict`` or a union of them), references inlined,
    as the tool answers it: an episode's ``entities`` a list of names (node/api/json_shapes.py)."""
    schemas = AnswerSchemas(_NAME)
    root = schemas.of(answer)
    schema = _inlined(root, readable_schema(schemas.components), ())
    assert isinstance(schema, dict)
    if schema.get("type") != "object":
        schema = {"type": "object", **schema}
    return schema


def _inlined(
    schema: object, components: dict[str, dict[str, object]], within: tuple[str, ...]
) -> object:
    """``schema`` with every ``$ref`` replaced by the component it names."""
    if isinstance(schema, list):
        return [_inlined(item, components, within) for item in schema]
    if not isinstance(schema, dict):
        return schema
    name = schema.get("$ref")
    if isinstance(name, str):
        if name in within:
            raise TypeError(f"{name} holds itself: its schema cannot be written out whole")
        return _inlined(components[name], components, (*within, name))
    return {key: _inlined(value, components, within) for key, value in schema.items()}


def _title(answer: object) -> str:
    name = getattr(answer, "__name__", None)
    return name if isinstance(name, str) else "Answer"
