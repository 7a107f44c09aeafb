from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from feral.node.absorb.phrases import parse_fact, snake_case
from feral.node.node import Node

PHRASINGS = [
    ("my doctor's name is Dr. Chen", ("user", "doctor_name", "Dr. Chen")),
    ("My doctor’s name is Dr. Chen.", ("user", "doctor_name", "Dr. Chen")),
    ("Alice's birthday is on May 4", ("Alice", "birthday", "May 4")),
    ("Dr. Chen's office is in Lisbon", ("Dr. Chen", "office", "Lisbon")),
    ("Alice Smith's cat is called Tom", ("Alice Smith", "cat_name", "Tom")),
    ("my favourite colour is green", ("user", "favourite_colour", "green")),
    ("my favourite colour is green!!", ("user", "favourite_colour", "green")),
    ("My Name Is Bob", ("user", "name", "Bob")),
    ("my kids are Ana and Rui", ("user", "kids", "Ana and Rui")),
    ("I live in Porto", ("user", "lives_in", "Porto")),
    ("i live in  porto.", ("user", "lives_in", "porto")),
    ("I work at Acme", ("user", "works_at", "Acme")),
    ("I work for the city", ("user", "works_for", "the city")),
    ("I like X", ("user", "likes", "X")),
    ("I love jazz", ("user", "likes", "jazz")),
    ("I really like green tea.", ("user", "likes", "green tea")),
    ("I hate cilantro", ("user", "dislikes", "cilantro")),
    ("Alice is a nurse", ("Alice", "is", "a nurse")),
    ("Alice Smith is my sister.", ("Alice Smith", "is", "my sister")),
    ("Porto is lovely in June", ("Porto", "is", "lovely in June")),
    ("It is late", ("user", "note", "It is late")),
    ("The bus is late", ("user", "note", "The bus is late")),
    ("alice is a nurse", ("user", "note", "alice is a nurse")),
    ("buy oat milk on the way home", ("user", "note", "buy oat milk on the way home")),
    ("  the garage code is 4711  ", ("user", "note", "the garage code is 4711")),
    ("I like", ("user", "note", "I like")),
    ("my name is ...", ("user", "note", "my name is ...")),
    (
        "my plan for the whole long weekend is rest",
        ("user", "note", "my plan for the whole long weekend is rest"),
    ),  # noqa: E501
    ("I likely forgot", ("user", "note", "I likely forgot")),
]


@pytest.mark.parametrize(("text", "triple"), PHRASINGS)
def test_common_phrasings_become_triples_and_the_rest_notes(text, triple):
    assert parse_fact(text) == triple


@pytest.mark.parametrize(
    ("attribute", "predicate"),
    [
        ("doctor's name", "doctor_name"),
        ("Favourite  Colour", "favourite_colour"),
        ("e-mail address:", "e_mail_address"),
        ("côr favorita", "côr_favorita"),
        ("__weird__", "weird"),
    ],
)
def test_predicates_are_snake_case_without_possessives_or_punctuation(attribute, predicate):
    assert snake_case(attribute) == predicate


@pytest.fixture
async def node(tmp_path: Path) -> AsyncIterator[Node]:
    node = await Node.open(tmp_path / "home")
    yield node
    await node.close()


async def test_absorb_stores_the_parsed_triple(node: Node):
    row = (await node.absorb("I live in Porto")).row
    assert (row["subject"], row["predicate"], row["object"]) == ("user", "lives_in", "Porto")


async def test_the_same_fact_said_twice_in_different_words_is_one_row(node: Node):
    first = (await node.absorb("I live in Porto.")).row
    written = (await node.stats())["delta_log_entries"]
    again = (await node.absorb("i live in  porto")).row
    assert again["id"] == first["id"]
    assert again["object"] == "Porto"
    stats = await node.stats()
    assert stats["tiers"]["semantic"]["live"] == 1
    assert stats["delta_log_entries"] == written  # the second saying wrote nothing
