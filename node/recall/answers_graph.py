"""The answers of the entity graph's reads (``feral graph list`` and ``query``), as types.

Beside node/answers.py and for the same reasons: plain dicts at runtime, so the JSON is
unchanged, and the OpenAPI document's schemas made from them.
"""

from __future__ import annotations

from typing import Literal, TypedDict

__all__ = ["EntityRef", "GraphEntity", "GraphQueryAnswer", "GraphReached", "GraphStep"]


class GraphEntity(TypedDict):
    """An entity as ``feral graph list`` shows it: its attributes (every live value kept), how
    many relations it takes part in, and the single-valued attributes holding several values."""

    id: str
    type: str
    name: str
    attributes: dict[str, list[str]]
    relations: int
    conflicting: list[str]


GraphStep = TypedDict(
    "GraphStep",
    {
        "fact_id": str,
        "subject": str,
        "predicate": str,
        "object": str,
        "direction": Literal["outbound", "inbound"],
        "from": str,  # a keyword: hence the call form
    },
)
GraphStep.__doc__ = """The fact a graph query crossed to reach an entity, and from which one."""


class GraphReached(TypedDict):
    id: str
    type: str
    name: str
    hops: int
    via: GraphStep


class EntityRef(TypedDict):
    type: str
    name: str


class GraphQueryAnswer(TypedDict):
    """``POST /api/graph/query`` and ``feral graph query --json``."""

    start: EntityRef
    results: list[GraphReached]
