"""``feral graph add|list|query`` in this process, and two real homes syncing a graph over
loopback whose queries then answer byte for byte alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .helpers import feral, feral_json, turn_off_embeddings
from .servers import Mesh, pair, run_parallel, wait_until


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    assert feral(home, "init").exit_code == 0
    turn_off_embeddings(home)
    return home


def relate(home: Path, source: str, relation: str, target: str) -> None:
    result = feral(home, "graph", "add", "--relation", source, relation, target)
    assert result.exit_code == 0, result.output


def test_add_list_and_query_a_small_graph(home: Path):
    added = feral(home, "graph", "add", "place", "Berlin")
    assert added.exit_code == 0 and added.stdout.startswith("place:Berlin  (n")
    relate(home, "place:Kreuzberg", "located in", "place:Berlin")
    relate(home, "place:Berlin", "located_in", "place:Germany")
    relate(home, "company:Acme", "located_in", "place:Kreuzberg")
    relate(home, "place:Germany", "located_in", "place:Kreuzberg")  # a cycle
    feral(home, "memory", "remember", "Berlin's population is 3.7 million")
    answer = feral_json(
        home, "graph", "query", "--start", "place:Germany", "--relation", "located_in",
        "--direction", "inbound", "--hops", "2", "--json",
    )  # fmt: skip
    assert [(r["hops"], r["type"], r["name"]) for r in answer["results"]] == [
        (1, "place", "Berlin"),
        (2, "place", "Kreuzberg"),
    ]
    table = feral(home, "graph", "query", "--start", "place:Germany", "--direction", "inbound")
    assert table.stdout.splitlines()[2].split() == [
        "1",
        "place:Berlin",
        "<-",
        "Berlin",
        "located_in",
        "Germany",
    ]
    listed = feral_json(home, "graph", "list", "--type", "place", "--json")
    berlin = next(e for e in listed if e["name"] == "Berlin")
    assert berlin["attributes"] == {"population": ["3.7 million"]}
    assert berlin["relations"] == 2
    # The relation is an ordinary fact: search finds it by its words.
    found = feral_json(home, "memory", "search", "Kreuzberg", "--strategy", "fts", "--json")
    assert any(r["content"] == "Kreuzberg located_in Berlin" for r in found["results"])


def test_conflicting_values_are_listed_both(home: Path, tmp_path: Path):
    """Two live values of a one-value attribute, as two devices that each superseded the old
    one leave them (``remember`` would supersede; an export's facts are imported as they were)."""
    feral(home, "graph", "add", "person", "Sam")
    exported = {"table": "facts", "hlc": 1, "origin": "x", "archived": False}
    lines = [
        {**exported, "subject": "Sam", "predicate": "doctor", "object": "Dr. Lee"},
        {**exported, "subject": "sam", "predicate": "doctor", "object": "Dr. Patel"},
    ]
    both = tmp_path / "both.jsonl"
    both.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    feral(home, "memory", "import", str(both))
    (sam,) = feral_json(home, "graph", "list", "--json")
    assert sam["attributes"] == {"doctor": ["Dr. Lee", "Dr. Patel"]}
    assert sam["conflicting"] == ["doctor"]
    assert "doctor" in feral(home, "graph", "list").stdout.splitlines()[2].split()[-1]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("add", "place"), "TYPE NAME"),
        (("add", "two words", "Berlin"), "entity type is one word"),
        (("add", "--relation", "Berlin", "in", "place:X"), "TYPE:NAME"),
        (("add", "--relation", "place:A", "in"), "FROM_TYPE:FROM RELATION TO_TYPE:TO"),
        (("add", "--relation", "place:A", "!!", "place:B"), "a relation needs"),
        (("query", "--start", "place:Atlantis"), "no entity place:Atlantis"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(home: Path, args, fragment):
    result = feral(home, "graph", *args)
    assert result.exit_code == 1, result.output
    message = result.stderr.strip()
    assert "\n" not in message and fragment in message, message


@pytest.mark.slow
def test_two_homes_syncing_over_loopback_answer_graph_queries_alike(mesh: Mesh):
    """The mesh fixture (tests/cli/conftest.py) stops the server and checks its log."""
    laptop, phone = mesh.add("laptop", "phone")
    pair(laptop, phone, dial=True)
    pair(phone, laptop, dial=False)
    # Offline, each names the same places in its own spelling and adds its own relations.
    laptop.cli("graph", "add", "--relation", "place:Berlin", "located_in", "place:Germany")
    laptop.cli("graph", "add", "--relation", "person:Sam", "lives_in", "place:berlin")
    phone.cli("graph", "add", "--relation", "place:BERLIN", "located_in", "place:germany")
    phone.cli("graph", "add", "--relation", "company:Acme", "located_in", "place:Berlin")
    phone.cli("graph", "add", "--relation", "place:Germany", "located_in", "place:Berlin")
    mesh.start(phone)
    query = ("graph", "query", "--start", "place:Germany", "--direction", "both", "--hops", "3",
             "--json")  # fmt: skip

    def alike() -> bool:
        assert laptop.run("sync", "now").returncode == 0
        results = run_parallel((node, query) for node in (laptop, phone))
        exports = run_parallel((node, ("memory", "export")) for node in (laptop, phone))
        return results[0].stdout == results[1].stdout and exports[0].stdout == exports[1].stdout

    assert wait_until(alike, 60, interval=0.5), "the two homes never agreed"
    answer = json.loads(laptop.run(*query).stdout)
    names = sorted((r["type"], r["name"].casefold()) for r in answer["results"])
    assert names == [("company", "acme"), ("person", "sam"), ("place", "berlin")]
    listed = run_parallel((node, ("graph", "list", "--json")) for node in (laptop, phone))
    assert listed[0].stdout == listed[1].stdout
    assert [e["type"] for e in json.loads(listed[0].stdout)] == [
        "company",
        "person",
        "place",
        "place",
    ]
