"""Repeats and statements the absorb rules used to archive a value for (issue 24): a value said
again in capitals or without its accents is the same value (nothing written, nothing archived);
a nationality or belief said of the person in a slot is a state of that person, never a new one;
a plain note said with "not" is the stored note's opposite (both kept, linked)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from feral.node.absorb.clauses import parse_facts
from feral.node.node import Node
from feral.storage.encoders.embedders import load_embedder


@pytest.fixture
async def node(tmp_path: Path) -> AsyncIterator[Node]:
    opened = await Node.open(tmp_path, embedder=load_embedder())
    yield opened
    await opened.close()


REPEATS = [
    ("My therapist is Dr. Okafor", "MY THERAPIST IS DR. OKAFOR"),
    ("My vet is Mrs. Dlamini", "my vet is MRS. DLAMINI"),
    ("I live in Málaga", "I live in Malaga"),
    ("My dentist is Dr. Sánchez", "my dentist is dr. sanchez"),
    ("I work at Société Générale", "I work at Societe Generale"),
    ("I'm allergic to crème brûlée", "I'm allergic to creme brulee"),
    ("My manager is Aleksander", "my manager is aleksander"),
    ("I live in New Delhi", "i live in new delhi"),
    ("My daughter is Inès", "My daughter's name is Ines"),
    ("my cat's name is Miso", "My cat is Miso"),
]


@pytest.mark.parametrize(("stored", "said"), REPEATS)
async def test_a_value_said_again_in_capitals_or_without_accents_is_a_repeat(
    node: Node, stored: str, said: str
) -> None:
    first = await node.absorb(text=stored)
    again = await node.absorb(text=said)
    assert again.classification == "duplicate" and again.archived == []
    assert again.as_dict()["merged_into"] == first.memory_id
    assert not (await node.get(first.memory_id))["archived"]


STATES = [
    ("My doctor is Dr. Moyo", "My doctor is Zimbabwean", "doctor_state"),
    ("My wife is Astrid", "My wife is Danish", "wife_state"),
    ("My manager is Pedro", "my manager is MEXICAN", "manager_state"),
    ("My dentist is Dr. Lam", "My dentist is Vietnamese-Australian", "dentist_state"),
    ("My husband is Ahmed", "My husband is Muslim", "husband_state"),
]


@pytest.mark.parametrize(("stored", "said", "predicate"), STATES)
async def test_a_nationality_or_belief_is_a_state_of_the_person_not_a_new_one(
    node: Node, stored: str, said: str, predicate: str
) -> None:
    person = await node.absorb(text=stored)
    state = await node.absorb(text=said)
    assert state.row["predicate"] == predicate
    assert state.classification == "related" and state.archived == []
    assert not (await node.get(person.memory_id))["archived"]


def test_a_name_that_ends_like_a_nationality_is_still_a_name() -> None:
    assert parse_facts("My husband is Julian") == [("user", "husband", "Julian")]
    assert parse_facts("My manager is Marian") == [("user", "manager", "Marian")]
    assert parse_facts("My wife is Sierra") == [("user", "wife", "Sierra")]
    assert parse_facts("My doctor is South African") == [("user", "doctor_state", "South African")]


OPPOSITES = [
    ("I'm allergic to wasps", "I'm not allergic to wasps"),
    ("I eat eggs", "I don't eat eggs"),
    ("I can drive", "I cannot drive"),
    ("The boiler is serviced", "The boiler is not serviced"),
]


@pytest.mark.parametrize(("stored", "said"), OPPOSITES)
async def test_a_note_said_with_not_contradicts_the_stored_note(
    node: Node, stored: str, said: str
) -> None:
    first = await node.absorb(text=stored)
    opposite = await node.absorb(text=said)
    assert opposite.classification == "contradict" and opposite.archived == []
    assert [e["to_id"] for e in opposite.edges] == [first.memory_id]
    assert not (await node.get(first.memory_id))["archived"]


async def test_a_negation_of_another_note_is_only_related(node: Node) -> None:
    await node.absorb(text="I'm allergic to wasps")
    other = await node.absorb(text="I'm not allergic to bees")
    assert other.classification != "contradict" and other.archived == []
