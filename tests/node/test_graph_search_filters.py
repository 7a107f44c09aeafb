"""Graph hits obey the search's own filters: ``scope`` and ``min_score``
(node/recall/graph_search.py).

A search in one scope shows only that scope's memories, so a path resolves only through facts
of that scope; a graph answer is weighed like any hit (relevance x temporal x importance), so
``min_score`` drops it like any hit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from feral.node.curation import actions as curation
from feral.node.node import Node

from .support import Mesh

SESSION = "session:school-run"


@pytest.fixture
async def node(tmp_path: Path) -> AsyncIterator[Node]:
    mesh = Mesh(tmp_path)
    mesh.add("a")
    node = await mesh.open("a")
    for text in ("My son is Leo", "Leo's school is Hillside Primary",
                 "Hillside Primary's head teacher is Mrs Grant"):  # fmt: skip
        await node.absorb(text)
    for text in ("My son is Max", "Max's school is Elm Grove"):
        await node.absorb(text, scope=SESSION)
    yield node
    await mesh.aclose()


def graph_hits(result: object) -> list[tuple[str, str]]:
    hits = result.results  # type: ignore[attr-defined]
    return [(hit["content"], hit["via"]) for hit in hits if hit.get("via")]


async def test_without_a_scope_the_path_resolves_through_every_scope(node: Node):
    result = await node.search("my son's school", strategy="fts")
    answers = {content for content, via in graph_hits(result) if via == "graph"}
    assert answers == {"Leo school Hillside Primary", "Max school Elm Grove"}


async def test_a_scope_resolves_the_path_through_its_own_facts_only(node: Node):
    user = await node.search("my son's school", strategy="fts", scope="user")
    assert ("Leo school Hillside Primary", "graph") in graph_hits(user)
    assert all("Max" not in content and "Elm" not in content for content, _ in graph_hits(user))
    assert all(hit["scope"] == "user" for hit in user.results)
    session = await node.search("my son's school", strategy="fts", scope=SESSION)
    assert graph_hits(session)[0] == ("Max school Elm Grove", "graph")
    assert session.results[0]["graph_path"] == ["user son Max", "Max school Elm Grove"]
    assert all(hit["scope"] == SESSION for hit in session.results)


async def test_a_scope_with_no_such_path_leaves_no_graph_hit(node: Node):
    other = await node.search("my son's school", strategy="fts", scope="agent:planner")
    assert graph_hits(other) == [] and other.results == []


async def test_graph_hits_are_weighed_and_min_score_drops_them(node: Node):
    result = await node.search("my son's school", strategy="fts", scope="user")
    answer = result.results[0]
    assert answer["via"] == "graph"
    assert answer["score"] == pytest.approx(answer["relevance"] * answer["temporal"]
                                            * answer["importance"] * answer["access"])  # fmt: skip
    linked = [hit for hit in result.results if hit.get("via") == "graph_link"]
    assert linked and all(0 < hit["score"] < answer["score"] for hit in linked)
    await curation.boost(node, answer["id"], 0.1, "an old school")
    weak = await node.search("my son's school", strategy="fts", scope="user", min_score=0.2)
    assert answer["id"] not in [hit["id"] for hit in weak.results]
    assert all(hit["score"] >= 0.2 for hit in weak.results)
    kept = await node.search("my son's school", strategy="fts", scope="user", min_score=0.05)
    assert kept.results[0]["id"] == answer["id"]
    assert kept.results[0]["importance"] == 0.1
