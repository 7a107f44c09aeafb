"""Search follows the graph (node/recall/graph_search.py): relation paths resolve through facts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from feral.node.node import Node
from feral.node.recall.graph_search import find_path

from .support import Mesh

HOUSEHOLD = (
    "My son is Leo",
    "Leo's school is Hillside Primary",
    "Hillside Primary's head teacher is Mrs Grant",
    "Tom's son is Ben",
    "Ben's school is Oakfield Academy",
    "Oakfield Academy's head teacher is Mr Osei",
    "My wife is Sam",
    "Sam's dentist is Dr. Novak",
    "Priya's dentist is Dr. Moreau",
    "My dentist is Dr. Patel",
    "Bob's employer is Acme Logistics",
    "Acme Logistics's city is Leeds",
    "Carol's employer is Northwind Foods",
    "Northwind Foods's city is York",
    "my sister's doctor is Dr. Lee",
    "My doctor is Dr. Chen",
)


@pytest.fixture
async def node(tmp_path: Path) -> AsyncIterator[Node]:
    mesh = Mesh(tmp_path)
    mesh.add("a")
    node = await mesh.open("a")
    for text in HOUSEHOLD:
        await node.absorb(text)
    yield node
    await mesh.aclose()


def contents(result: object) -> list[tuple[str, str | None]]:
    return [(hit["content"], hit.get("via")) for hit in result.results]  # type: ignore[attr-defined]


async def test_my_sons_school_resolves_through_the_facts_before_ranking(node: Node):
    result = await node.search("my son's school", strategy="fts")
    first = result.results[0]
    assert (first["content"], first["via"]) == ("Leo school Hillside Primary", "graph")
    assert first["graph_path"] == ["user son Leo", "Leo school Hillside Primary"]
    assert ("Hillside Primary head_teacher Mrs Grant", "graph_link") in contents(result)
    assert "Ben school Oakfield Academy" not in [c for c, _ in contents(result)[:2]]


async def test_a_look_alike_path_finds_its_own_answer(node: Node):
    wife = await node.search("my wife's dentist", strategy="fts")
    assert contents(wife)[0] == ("Sam dentist Dr. Novak", "graph")
    neighbour = await node.search("Tom's son's school", strategy="fts")
    assert contents(neighbour)[0] == ("Ben school Oakfield Academy", "graph")


async def test_a_path_of_three_hops_and_words_around_it(node: Node):
    result = await node.search("my son's school's head teacher", strategy="fts")
    assert contents(result)[0] == ("Hillside Primary head_teacher Mrs Grant", "graph")
    city = await node.search("where is Bob's employer's city?", strategy="fts")
    assert contents(city)[0] == ("Acme Logistics city Leeds", "graph")


async def test_a_compound_predicate_is_tried_first_and_my_doctor_is_not_my_sisters(node: Node):
    result = await node.search("my sister's doctor", strategy="fts")
    assert contents(result)[0] == ("user sister_doctor Dr. Lee", "graph")
    assert "user doctor Dr. Chen" not in [c for c, v in contents(result) if v]


async def test_linked_memories_are_at_most_three_and_marked(node: Node):
    for n in range(5):
        await node.remember(("Hillside Primary", f"club_{n}", f"club number {n}"))
    result = await node.search("my son's school", strategy="fts", top_k=10)
    linked = [hit for hit in result.results if hit.get("via") == "graph_link"]
    assert len(linked) == 3
    assert len(result.results) <= 10
    ids = [hit["id"] for hit in result.results]
    assert len(ids) == len(set(ids))


async def test_a_path_that_does_not_resolve_is_an_ordinary_search(node: Node):
    result = await node.search("my daughter's school", strategy="fts")
    assert all("via" not in hit for hit in result.results)
    result = await node.search("Sam's dentist", strategy="fts")  # one hop: not a path
    assert all("via" not in hit for hit in result.results)


async def test_an_archived_fact_no_longer_resolves(node: Node):
    first = (await node.search("my son's school", strategy="fts")).results[0]
    await node.set_archived(first["id"], True)
    result = await node.search("my son's school", strategy="fts")
    assert all(hit.get("via") != "graph" for hit in result.results)


@pytest.mark.parametrize(
    ("query", "start", "words"),
    [
        ("my son's school", "user", ("son", "school")),
        ("our son's travel document", "user", ("son", "travel", "document")),
        ("What is Bob's employer's city", "Bob", ("employer", "city")),
        ("Dr. Chen's nurse's name", "Dr. Chen", ("nurse", "name")),
    ],
)
def test_paths_are_found_in_queries(query, start, words):
    path = find_path(query)
    assert path is not None and (path.start, path.words) == (start, words)


@pytest.mark.parametrize(
    "query", ["Sam's GP", "my doctor", "the school run", "mother's joint operation date"]
)
def test_a_single_possessive_or_no_owner_is_not_a_path(query):
    assert find_path(query) is None
