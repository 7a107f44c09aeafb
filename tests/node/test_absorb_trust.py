"""Memory the user can trust (issue 24): ``remember`` never drops a distinct fact as a
duplicate, supersedes only a replacement of the same slot, splits compound sentences, names
every row it merged into or archived, and a session's fact never moves or archives the user's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from feral.node.absorb.clauses import parse_facts
from feral.node.node import Node
from feral.storage.encoders.embedders import load_embedder
from feral.storage.memory.memory_model import read_meta

LOOK_ALIKES = [
    ("I take 5 mg of melatonin at night", "I take 5 g of melatonin at night"),
    ("the spare key is under the left flowerpot", "the spare key is under the right flowerpot"),
    ("the back door is open", "the back door is closed"),
    ("I started taking vitamin D", "I stopped taking vitamin D"),
    ("my girlfriend loves sushi", "my boyfriend loves sushi"),
    ("my doctor is dr chen", "my doctor is dr lee"),
    ("Bob owes Alice 20 euros", "Alice owes Bob 20 euros"),
    ("the meeting is before lunch", "the meeting is after lunch"),
]


@pytest.fixture
async def node(tmp_path: Path) -> AsyncIterator[Node]:
    opened = await Node.open(tmp_path, embedder=load_embedder())
    yield opened
    await opened.close()


async def _live(node: Node) -> list[tuple[str, str, str]]:
    def read(conn):  # type: ignore[no-untyped-def]
        sql = "SELECT subject, predicate, object FROM facts WHERE archived = 0 AND deleted = 0"
        return [tuple(r) for r in conn.execute(sql)]

    return sorted(await node.store.read(read))


@pytest.mark.parametrize(("stored", "said"), LOOK_ALIKES)
async def test_a_look_alike_is_written_and_linked_never_merged(node: Node, stored, said):
    first = await node.absorb(text=stored)
    second = await node.absorb(text=said)
    assert second.classification != "duplicate" and second.memory_id != first.memory_id
    assert second.as_dict()["written"] is True
    if second.classification == "supersede":  # a new doctor: the old one named, restorable
        assert second.as_dict()["archived_rows"] == [first.memory_id]
        return
    assert len(await _live(node)) == 2
    if second.classification == "related":
        assert first.memory_id in [e["to_id"] for e in second.edges]


async def test_the_same_words_again_merge_and_the_answer_names_the_row(node: Node):
    first = await node.absorb(text="I really like green tea")
    again = await node.absorb(text="I love green tea a lot")
    answer = again.as_dict()
    assert (answer["classification"], answer["written"]) == ("duplicate", False)
    assert answer["merged_into"] == first.memory_id


async def test_keep_both_writes_a_duplicate_and_a_replacement_beside_the_stored_row(node: Node):
    tea = await node.absorb(text="I really like green tea")
    assert (await node.absorb(text="I like green tea a lot")).classification == "duplicate"
    kept = await node.absorb(text="I like green tea a lot", keep_both=True)
    assert kept.classification == "related" and kept.memory_id != tea.memory_id
    assert [(e["type"], e["to_id"]) for e in kept.edges] == [("related_to", tea.memory_id)]
    chen = await node.absorb(text="my doctor is Dr. Chen")
    lee = await node.absorb(text="my doctor is Dr. Lee", keep_both=True)
    assert lee.archived == [] and not (await node.get(chen.memory_id))["archived"]
    same = await node.absorb(text="I really like green tea", keep_both=True)
    assert same.classification == "duplicate"  # the very same fact is one row, always


STATES = [
    "My doctor is on holiday",
    "my doctor is away until Monday",
    "my doctor is very strict",
    "My doctor is not Dr. Lee",
    "my doctor is no longer taking new patients",
]


@pytest.mark.parametrize("said", STATES)
async def test_a_state_of_the_doctor_is_a_new_fact_related_to_it(node: Node, said):
    chen = await node.absorb(text="my doctor is Dr. Chen")
    state = await node.absorb(text=said)
    assert state.classification == "related" and state.archived == []
    assert chen.memory_id in [e["to_id"] for e in state.edges]
    assert not (await node.get(chen.memory_id))["archived"]
    assert "not Dr. Lee" not in {row[2] for row in await _live(node)}


async def test_a_negation_of_the_stored_value_contradicts_it(node: Node):
    lee = await node.absorb(text="my doctor is Dr. Lee")
    negated = await node.absorb(text="my doctor is not Dr. Lee")
    assert negated.row["predicate"] == "not_doctor" and negated.row["object"] == "Dr. Lee"
    assert negated.classification == "contradict"
    assert [e["to_id"] for e in negated.edges] == [lee.memory_id]


async def test_the_wife_being_pregnant_keeps_her_name(node: Node):
    maria = await node.absorb(text="my wife is Maria")
    await node.absorb(text="My wife is pregnant")
    assert not (await node.get(maria.memory_id))["archived"]


MOVES = [
    "I moved to Berlin",
    "I relocated to Berlin",
    "I'm now living in Berlin",
    "I am living in Berlin now",
    "My home is in Berlin now",
    "I've just moved to Berlin last month",
    "I now live in Berlin",
]


@pytest.mark.parametrize("said", MOVES)
async def test_a_move_replaces_where_the_user_lives(node: Node, said):
    paris = await node.absorb(text="I live in Paris")
    moved = await node.absorb(text=said)
    assert moved.row["predicate"] == "lives_in" and moved.row["object"] == "Berlin"
    assert moved.classification == "supersede" and moved.archived == [paris.memory_id]
    assert moved.as_dict()["archived_rows"] == [paris.memory_id]


async def test_a_compound_sentence_is_absorbed_clause_by_clause(node: Node):
    await node.absorb(text="I live in Paris")
    said = await node.absorb(text="I live in Lisbon now and my dentist is Dr. Silva")
    answer = said.as_dict()
    assert [(c["predicate"], c["object"]) for c in answer["clauses"]] == [
        ("lives_in", "Lisbon"),
        ("dentist", "Dr. Silva"),
    ]
    assert answer["clauses"][0]["classification"] == "supersede"
    assert ("user", "dentist", "Dr. Silva") in await _live(node)


@pytest.mark.parametrize(
    ("text", "triples"),
    [
        ("my sister is called Ines", [("user", "sister_name", "Ines")]),
        ("I like salt and pepper", [("user", "likes", "salt and pepper")]),
        ("Tom and I live in Porto", [("user", "note", "Tom and I live in Porto")]),
        ("buy milk. call mum.", [("user", "note", "buy milk. call mum.")]),
        (
            "Bob lives in Porto and works at Acme",
            [("Bob", "lives_in", "Porto"), ("Bob", "works_at", "Acme")],
        ),
        ("my doctor, Dr. Chen, is away", [("user", "note", "my doctor, Dr. Chen, is away")]),
        (
            "I work at Acme, but my wife works at Initech",
            [("user", "works_at", "Acme"), ("user", "wife_works_at", "Initech")],
        ),
    ],
)
def test_clauses_split_only_where_each_piece_says_something(text, triples):
    assert parse_facts(text) == triples


async def test_a_session_repeating_the_users_fact_leaves_it_the_users(node: Node):
    users = await node.absorb(text="my doctor is Dr. Chen")
    again = await node.absorb(text="my doctor is Dr. Chen", scope="session:s1")
    assert again.classification == "duplicate"
    assert (await node.store.read(read_meta, users.memory_id)).scope == "user"


async def test_a_sessions_new_value_never_archives_the_users(node: Node):
    chen = await node.absorb(text="my doctor is Dr. Chen")
    lee = await node.absorb(text="my doctor is Dr. Lee", scope="agent:helper")
    assert lee.classification == "related" and lee.archived == []
    assert not (await node.get(chen.memory_id))["archived"]
    own = await node.absorb(text="my doctor is Dr. Kim", scope="agent:helper")
    assert own.archived == [lee.memory_id]  # its own scope's value it may replace
    assert not (await node.get(chen.memory_id))["archived"]
    user = await node.absorb(text="my doctor is Dr. Park")  # the user's own word replaces
    assert chen.memory_id in user.archived


async def test_the_user_stating_a_sessions_fact_makes_it_the_users(node: Node):
    said = await node.absorb(text="my dentist is Dr. Silva", scope="session:s1")
    again = await node.absorb(text="my dentist is Dr. Silva", scope="user")
    assert again.classification == "duplicate" and again.memory_id == said.memory_id
    assert (await node.store.read(read_meta, said.memory_id)).scope == "user"
