"""Phrasings of a change the absorb rules used to miss (issue 24): a new value said as "my new
dentist", a move said "from X to Y" or after "these days", a negation said "isn't", a relative's
home or work, and a lower-case title that is not the end of a sentence. Each is read as the slot
it fills, so a replacement supersedes and a repeat merges; what is not a change stays a note."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from feral.node.absorb.clauses import parse_facts
from feral.node.node import Node
from feral.storage.encoders.embedders import load_embedder

READINGS = [
    ("My new dentist is Dr. Costa", [("user", "dentist", "Dr. Costa")]),
    ("my current manager is Tom", [("user", "manager", "Tom")]),
    ("My new home is in Vienna", [("user", "lives_in", "Vienna")]),
    ("my old doctor was Dr. Weiss", [("user", "old_doctor", "Dr. Weiss")]),
    ("These days I live in Vienna", [("user", "lives_in", "Vienna")]),
    ("Nowadays, I work at Initech", [("user", "works_at", "Initech")]),
    ("I moved from Paris to Rome", [("user", "lives_in", "Rome")]),
    ("we moved from Porto to Braga last year", [("user", "lives_in", "Braga")]),
    ("I've settled in Rome", [("user", "lives_in", "Rome")]),
    ("I now reside in Rome", [("user", "lives_in", "Rome")]),
    ("I now work at Initech", [("user", "works_at", "Initech")]),
    ("My dentist isn't Dr. Costa", [("user", "not_dentist", "Dr. Costa")]),
    ("my manager wasn't Tom", [("user", "not_manager", "Tom")]),
    ("I don't really like running", [("user", "dislikes", "running")]),
    ("My dentist is dr. Silva", [("user", "dentist", "dr. Silva")]),
    ("my sister lives in Bergen", [("user", "sister_lives_in", "Bergen")]),
    ("My wife works at Initech", [("user", "wife_works_at", "Initech")]),
    (
        "I moved to Porto and my new doctor is Dr. Ramos",
        [("user", "lives_in", "Porto"), ("user", "doctor", "Dr. Ramos")],
    ),
    (
        "I live in Oslo now, my sister lives in Bergen",
        [("user", "lives_in", "Oslo"), ("user", "sister_lives_in", "Bergen")],
    ),
    ("I'm 35 years old", [("user", "age", "35")]),
    ("I am 29", [("user", "age", "29")]),
    ("My phone number is now 555-0199", [("user", "phone", "555-0199")]),
    ("My mum is Ana", [("user", "mother", "Ana")]),
    ("I've been living in Oaxaca since May", [("user", "lives_in", "Oaxaca")]),
    ("we have been living in Ghent for a year", [("user", "lives_in", "Ghent")]),
    ("I currently live in Ghent", [("user", "lives_in", "Ghent")]),
    ("I still live in Ghent", [("user", "lives_in", "Ghent")]),
    ("MY DENTIST IS DR. VOSS", [("user", "dentist", "DR. VOSS")]),
    (
        "I live in Riga and always reply in Latvian",
        [("user", "lives_in", "Riga"), ("user", "note", "always reply in Latvian")],
    ),
    (
        "My dentist is Dr. Bauer; never book me before 9",
        [("user", "dentist", "Dr. Bauer"), ("user", "note", "never book me before 9")],
    ),
    ("Home is Tbilisi now", [("user", "lives_in", "Tbilisi")]),
    ("Just moved to Porto", [("user", "lives_in", "Porto")]),
    ("Since 2021 we've lived in Galway", [("user", "lives_in", "Galway")]),
    ("I've lived in Galway for six years", [("user", "lives_in", "Galway")]),
    ("I moved out of Leeds to York", [("user", "lives_in", "York")]),
    ("I have a new dentist, Dr. Abara", [("user", "dentist", "Dr. Abara")]),
    ("I've got a new manager: Ilse", [("user", "manager", "Ilse")]),
    ("I started a new job at Arup", [("user", "works_at", "Arup")]),
    ("I now call Ghent home", [("user", "lives_in", "Ghent")]),
    ("I sold up and moved to Málaga", [("user", "lives_in", "Málaga")]),
    ("We live in Köln now", [("user", "lives_in", "Köln")]),
    ("I moved to Oslo in June", [("user", "lives_in", "Oslo")]),
    ("We relocated to Turin in the spring", [("user", "lives_in", "Turin")]),
    ("I changed my dentist to Dr. Ruiz", [("user", "dentist", "Dr. Ruiz")]),
    ("I've changed GP to Dr. Kaur", [("user", "gp", "Dr. Kaur")]),
    ("My manager changed to Bea", [("user", "manager", "Bea")]),
    ("We switched to Dr. Blanco as our vet", [("user", "vet", "Dr. Blanco")]),
    ("My favourite film these days is Arrival", [("user", "favourite_film", "Arrival")]),
    ("I quit Infineon and joined Bosch", [("user", "works_at", "Bosch")]),
    ("I changed jobs and now work at Mollie", [("user", "works_at", "Mollie")]),
    ("Joon now works at Kakao", [("Joon", "works_at", "Kakao")]),
    ("I no longer like olives", [("user", "dislikes", "olives")]),
    ("I never liked karaoke", [("user", "dislikes", "karaoke")]),
    (
        "My husband is Omar and he works at Careem",
        [("user", "husband", "Omar"), ("user", "husband_works_at", "Careem")],
    ),
    (
        "My partner is Sam and we live in Leeds",
        [("user", "partner", "Sam"), ("user", "lives_in", "Leeds")],
    ),
    (
        "I like hiking as well as climbing",
        [("user", "likes", "hiking"), ("user", "likes", "climbing")],
    ),
    ("I love sushi and also ramen", [("user", "likes", "sushi"), ("user", "likes", "ramen")]),
    ("My husband no longer works at Lidl", [("user", "not_husband_works_at", "Lidl")]),
    ("I no longer work at Aldi", [("user", "not_works_at", "Aldi")]),
    ("My sister no longer lives in Oslo", [("user", "not_sister_lives_in", "Oslo")]),
    ("Dr. Ortega is not my dentist anymore", [("user", "not_dentist", "Dr. Ortega")]),
    # Not a change of where the user lives or what a slot holds: left as they were.
    ("Tom is not my type", [("Tom", "is_not", "my type")]),
    (
        "I changed my doctor's appointment to Friday",
        [("user", "note", "I changed my doctor's appointment to Friday")],
    ),
    (
        "I switched the heating to eco mode",
        [("user", "note", "I switched the heating to eco mode")],
    ),
    ("she works at Careem", [("user", "note", "she works at Careem")]),
    ("I've lived in Tokyo", [("user", "note", "I've lived in Tokyo")]),
    ("Home is where the heart is", [("Home", "is", "where the heart is")]),
    ("I've been living abroad", [("user", "note", "I've been living abroad")]),
    ("I like tea and always coffee", [("user", "likes", "tea and always coffee")]),
    ("These days are long", [("user", "note", "These days are long")]),
    ("I moved from Paris", [("user", "note", "I moved from Paris")]),
    ("I'm 35 minutes late", [("user", "note", "I'm 35 minutes late")]),
    ("my new car is red", [("user", "car", "red")]),
    ("the new doctor is Dr. Ramos", [("user", "note", "the new doctor is Dr. Ramos")]),
]


@pytest.mark.parametrize(("text", "triples"), READINGS)
def test_a_change_is_read_as_the_slot_it_fills(text, triples):
    assert parse_facts(text) == triples


@pytest.fixture
async def node(tmp_path: Path) -> AsyncIterator[Node]:
    opened = await Node.open(tmp_path, embedder=load_embedder())
    yield opened
    await opened.close()


async def test_a_title_in_lower_case_repeats_the_value_and_archives_nothing(node: Node):
    silva = await node.absorb(text="My dentist is Dr. Silva")
    again = await node.absorb(text="my dentist is dr. Silva")
    assert again.classification == "duplicate" and again.archived == []
    assert not (await node.get(silva.memory_id))["archived"]


@pytest.mark.parametrize(
    ("stored", "said"),
    [
        ("My dentist is Dr. Silva", "My new dentist is Dr. Costa"),
        ("I live in Paris", "I moved from Paris to Rome"),
        ("I live in Paris", "These days I live in Vienna"),
        ("I work at Acme", "I now work at Initech"),
        ("I'm 34 years old", "I'm 35 years old"),
        ("My phone number is 555-0101", "My phone number is now 555-0199"),
    ],
)
async def test_a_new_value_said_another_way_supersedes_the_old(node: Node, stored, said):
    old = await node.absorb(text=stored)
    new = await node.absorb(text=said)
    assert new.classification == "supersede" and new.archived == [old.memory_id]


async def test_a_negation_said_isnt_contradicts_the_value(node: Node):
    silva = await node.absorb(text="My dentist is Dr. Silva")
    said = await node.absorb(text="My dentist isn't Dr. Silva")
    assert said.classification == "contradict" and said.archived == []
    assert not (await node.get(silva.memory_id))["archived"]


async def test_working_for_the_same_employer_repeats_working_at_it(node: Node):
    acme = await node.absorb(text="I work at Acme")
    again = await node.absorb(text="I work for Acme")
    assert again.classification == "duplicate" and again.as_dict()["merged_into"] == acme.memory_id


async def test_working_for_someone_else_never_archives_where_one_works(node: Node):
    hospital = await node.absorb(text="I work at the hospital")
    employer = await node.absorb(text="I work for the NHS")
    assert employer.classification != "supersede" and employer.archived == []
    assert not (await node.get(hospital.memory_id))["archived"]
