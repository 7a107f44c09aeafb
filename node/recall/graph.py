"""The entity graph as a user reaches it (``feral graph ...`` and ``/api/graph/...``).

Entities are named ``TYPE:NAME`` (``place:Berlin``, ``person:Dr. Chen``): the type is one word
(letters, digits, ``_`` or ``-``; stored lower-case), the name everything after the first colon.
A relation is stored as a fact ``NAME  RELATION  NAME`` through the ordinary fact write, with the
relation in the phrasing rules' snake_case ("located in" is ``located_in``), so search, the wiki,
exports and sync see it like any fact. The reads are storage/memory/graph.py's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from feral.node.absorb import fact_rules
from feral.node.absorb.phrases import snake_case
from feral.storage.db.rows import FactRow
from feral.storage.memory import graph
from feral.storage.memory.graph_limits import DIRECTIONS
from feral.sync.errors import InvalidInput

if TYPE_CHECKING:  # the node and its store: not for a CLI listing its commands
    from feral.node.answers import EntityRow
    from feral.node.kernel import Kernel

    from .answers_graph import GraphEntity, GraphQueryAnswer, GraphReached

__all__ = [
    "DIRECTIONS",
    "SINGLE_VALUED",
    "add_entity",
    "check_entity",
    "list_graph",
    "parse_ref",
    "query_graph",
    "relate",
    "relation_name",
]

SINGLE_VALUED = (
    fact_rules.SINGLE_VALUED
    | {f"{name}_name" for name in fact_rules.SINGLE_VALUED}
    | frozenset("gp city country headquarters located_in".split())
)
"""Attributes an entity has one value of at a time: two live values are shown as conflicting.
The slots absorb supersedes (node/absorb/fact_rules.py), and the places and roles of entities."""

_TYPE = re.compile(r"[^\W_][\w-]{0,63}")
MAX_NAME_BYTES = 1024


def check_entity(entity_type: str, name: str) -> tuple[str, str]:
    """``(type, name)`` stripped and checked.

    Raises:
        InvalidInput: a type that is not one word of at most 64 characters, or an empty name.
    """
    entity_type, name = entity_type.strip().lower(), " ".join(name.split())
    if not _TYPE.fullmatch(entity_type):
        raise InvalidInput(
            f"an entity type is one word (letters, digits, _ or -), not {entity_type!r}"
        )
    if not name or len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise InvalidInput(f"an entity name has 1 to {MAX_NAME_BYTES} bytes")
    return entity_type, name


def parse_ref(text: str) -> tuple[str, str]:
    """``"place:Berlin"`` to ``("place", "Berlin")``.

    Raises:
        InvalidInput: no colon, or a bad type or name (:func:`check_entity`).
    """
    entity_type, colon, name = text.partition(":")
    if not colon:
        raise InvalidInput(f"name an entity as TYPE:NAME (e.g. place:Berlin), not {text!r}")
    return check_entity(entity_type, name)


def relation_name(text: str) -> str:
    """A relation in the form facts store it: ``"located in"`` to ``"located_in"``."""
    relation = snake_case(text)
    if not relation:
        raise InvalidInput(f"a relation needs a letter or digit, not {text!r}")
    return relation


async def add_entity(node: Kernel, entity_type: str, name: str) -> EntityRow:
    """Name an entity (the same type and normalised name is always one row)."""
    return await node.add_entity(*check_entity(entity_type, name))


async def relate(node: Kernel, source: str, relation: str, target: str) -> FactRow:
    """Relate ``TYPE:NAME`` to ``TYPE:NAME``: both entities named, the fact remembered."""
    return await node.relate(parse_ref(source), relation_name(relation), parse_ref(target))


async def list_graph(node: Kernel, entity_type: str | None = None) -> list[GraphEntity]:
    """Every live entity (of one type, if given) with its attributes and conflicts."""
    kind = entity_type.strip().lower() if entity_type else None
    listed = await node.store.read(graph.list_entities, kind, SINGLE_VALUED)
    return cast("list[GraphEntity]", listed)


async def query_graph(
    node: Kernel,
    start: str,
    *,
    relations: Sequence[str] = (),
    direction: str = "outbound",
    hops: int = 1,
    limit: int = graph.MAX_RESULTS,
) -> GraphQueryAnswer:
    """The entities reachable from ``start`` (``TYPE:NAME``): ``{"start", "results"}``.

    Raises:
        InvalidInput: a bad start, relation, direction, hop count or limit.
        NotFoundError: no entity ``start``.
    """
    ref = parse_ref(start)
    if direction not in DIRECTIONS:
        raise InvalidInput(f"direction is one of {', '.join(DIRECTIONS)}, not {direction!r}")
    if not 1 <= hops <= graph.MAX_HOPS:
        raise InvalidInput(f"hops must be from 1 to {graph.MAX_HOPS}, got {hops}")
    if not 1 <= limit <= graph.MAX_RESULTS:
        raise InvalidInput(f"limit must be from 1 to {graph.MAX_RESULTS}, got {limit}")
    wanted = frozenset(relation_name(r) for r in relations) or None
    results = await node.store.read(
        lambda conn: graph.traverse(
            conn, ref, relations=wanted, direction=direction, hops=hops, limit=limit
        )
    )
    reached = cast("list[GraphReached]", results)
    return {"start": {"type": ref[0], "name": ref[1]}, "results": reached}
