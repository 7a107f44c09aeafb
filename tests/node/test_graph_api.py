"""The graph's HTTP routes (node/api/graph_routes.py): answers as the CLI's --json, JSON errors."""

from __future__ import annotations

import pytest

from feral.node.node import Node
from feral.node.recall.graph import list_graph, query_graph

from .test_api import Api, error_code


async def test_entities_relations_and_a_query_over_http(api: Api, node: Node):
    added = await api.post("/api/graph/entities", {"type": "Place", "name": "Berlin"})
    assert added.status == 200 and (added.body["type"], added.body["name"]) == ("place", "Berlin")
    for source, target in (("place:Kreuzberg", "place:Berlin"), ("place:Berlin", "place:Germany")):
        related = await api.post(
            "/api/graph/relations", {"from": source, "relation": "located in", "to": target}
        )
        assert related.status == 200, related.body
        assert related.body["predicate"] == "located_in"
    query = {
        "start": "place:Germany",
        "relations": ["located_in"],
        "direction": "inbound",
        "hops": 2,
    }
    answer = await api.post("/api/graph/query", query)
    assert answer.status == 200
    assert [(r["hops"], r["name"]) for r in answer.body["results"]] == [
        (1, "Berlin"),
        (2, "Kreuzberg"),
    ]
    listed = await api.get("/api/graph/entities?type=place")
    assert [e["name"] for e in listed.body] == ["Berlin", "Germany", "Kreuzberg"]


async def test_the_answers_are_what_the_node_answers(api: Api, node: Node):
    body = {"from": "person:Sam", "relation": "lives_in", "to": "place:Porto"}
    await api.post("/api/graph/relations", body)
    answer = await api.post("/api/graph/query", {"start": "place:Porto", "direction": "both"})
    assert answer.body == await query_graph(node, "place:Porto", direction="both")
    assert answer.body["results"][0]["name"] == "Sam"
    listed = await api.get("/api/graph/entities")
    assert listed.body == await list_graph(node)


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        ("/api/graph/entities", {"type": "two words", "name": "x"}, 422, "invalid_input"),
        ("/api/graph/entities", {"type": "place"}, 422, "invalid_request"),
        (
            "/api/graph/relations",
            {"from": "Berlin", "relation": "in", "to": "place:X"},
            422,
            "invalid_input",
        ),
        ("/api/graph/query", {"start": "place:Atlantis"}, 404, "not_found"),
        ("/api/graph/query", {"start": "place:Berlin", "hops": 0}, 422, "invalid_request"),
        ("/api/graph/query", {"start": "place:Berlin", "direction": "up"}, 422, "invalid_request"),
        ("/api/graph/query", {"start": "place:Berlin", "extra": 1}, 422, "invalid_request"),
    ],
)
async def test_bad_requests_are_json_errors(api: Api, path, body, status, code):
    answer = await api.post(path, body)
    assert (answer.status, error_code(answer)) == (status, code), answer.body
