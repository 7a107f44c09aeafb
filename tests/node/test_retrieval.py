"""A small retrieval check of the shipped model through ``Node.search`` (a sanity check, not a
benchmark): hand-written paraphrase queries, each with one target among look-alike distractors.

Run ``pytest -s tests/node/test_retrieval.py`` to see the figures. The assertion is modest on
purpose: the hybrid (alpha 0.5) must find at least what BM25 alone finds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from feral.node.node import Node
from feral.node.settings.config import load_settings, save_settings

from .support import Mesh

K = 5

PAIRS = [  # (stored memory, a query that paraphrases it)
    ("Booked flights to Lisbon for the June holiday", "vacation travel plans"),
    ("My doctor's name is Dr. Chen at the Riverside clinic", "who is my physician"),
    ("Renewed my passport at the consulate last week", "travel document renewal"),
    ("The car needs new brake pads before winter", "vehicle maintenance due"),
    ("Adopted a grey kitten from the animal shelter", "our new pet cat"),
    ("Started learning Spanish in evening classes", "foreign language lessons"),
    ("Paid the electricity bill for March", "utility payment"),
    ("Sarah's wedding is on the 14th of September", "date of my friend's marriage ceremony"),
    ("Allergic to penicillin: got a rash last time", "bad reactions to medication"),
    ("Moved into a flat on Baker Street in May", "new apartment address"),
    ("Ran a half marathon in under two hours", "running race result"),
    ("Promoted to senior engineer at work", "career advancement and job title"),
    ("The boiler broke and the house has no hot water", "heating repair problem"),
    ("Mum's birthday dinner is at the Italian restaurant", "mother's celebration meal"),
    ("Signed up for the gym near the office", "fitness membership"),
    ("The tax return must be filed before January 31", "deadline for submitting taxes"),
    ("Lent my drill to the neighbour next door", "who borrowed my tools"),
    ("Our daughter starts primary school in September", "child's education enrolment"),
    ("Favourite band is Radiohead; saw them live in 2017", "music concert preferences"),
    ("Planted tomatoes and basil in the back garden", "growing vegetables and herbs"),
    ("My bank card was stolen, so I ordered a replacement", "lost credit card"),
    ("The house insurance renews in October", "home policy renewal"),
    ("The dentist says a molar needs a filling", "tooth cavity treatment"),
    ("Cooking vegetarian meals on weekdays", "meatless diet"),
    ("Cracked the laptop screen after dropping it", "broken computer display"),
]

DISTRACTORS = [  # ordinary notes, several sharing a word with a query but not its meaning
    "Left my travel mug at the office again",
    "Plans for the garden shed are on the fridge",
    "The cat next door keeps sitting on our car",
    "Practised job interview questions with Tom",
    "Credit score check came back fine",
    "Card games night with the neighbours on Friday",
    "Renewal notice arrived for the magazine subscription",
    "The repair café opens on Saturdays",
    "Bought a new address book for the desk",
    "Water the houseplants every Sunday",
    "The meeting with the accountant went well",
    "Ordered a new blender for smoothies",
    "Watched a documentary about whales",
    "Cleaned out the attic and found old photos",
    "The printer at home keeps jamming",
    "Picked up dry cleaning on Tuesday",
    "Read a novel about a lighthouse keeper",
    "Parking permit for the street expires soon",
    "Called grandma to say hello",
    "Team lunch at the sushi place next week",
    "The wifi router needs a firmware update",
    "Recycling goes out on Thursday mornings",
    "Finished a jigsaw puzzle of the Alps",
    "Borrowed a book on chess openings from the library",
    "Date night at the cinema on Saturday",
    "The train was delayed by forty minutes",
    "Dinner party planned for six guests",
    "New running shoes are too tight",
    "Painted the spare bedroom light blue",
    "Forgot the umbrella on the bus",
]


@pytest.fixture
async def node(tmp_path: Path) -> AsyncIterator[Node]:
    mesh = Mesh(tmp_path)
    mesh.add("a")
    settings = load_settings(mesh.home("a"))
    memory = dataclasses.replace(settings.memory, embedder="minilm-static-256")
    save_settings(mesh.home("a"), dataclasses.replace(settings, memory=memory))
    yield await mesh.open("a")
    await mesh.aclose()


async def store(node: Node, texts: list[str]) -> list[str]:
    """Half as episodes, half as remembered notes (facts), so both tiers are searched."""
    ids = []
    for i, text in enumerate(texts):
        if i % 2:
            row = await node.remember(("user", "note", text))
        else:
            row = await node.add_episode("diary", text)
        ids.append(str(row["id"]))
    return ids


async def recall_at_k(node: Node, targets: list[str], strategy: str) -> float:
    found = 0
    for (_, query), target in zip(PAIRS, targets, strict=True):
        result = await node.search(query, strategy=strategy, top_k=K, alpha=0.5, mmr=False)
        found += target in [hit["id"] for hit in result.results]
    return found / len(PAIRS)


async def test_hybrid_finds_paraphrases_that_bm25_misses(node: Node) -> None:
    targets = await store(node, [memory for memory, _ in PAIRS])
    await store(node, DISTRACTORS)
    fts = await recall_at_k(node, targets, "fts")
    vector = await recall_at_k(node, targets, "vector")
    hybrid = await recall_at_k(node, targets, "hybrid")
    print(
        f"\nrecall@{K} over {len(PAIRS)} paraphrase queries, {len(PAIRS) + len(DISTRACTORS)} "
        f"memories: fts {fts:.2f}, vector {vector:.2f}, hybrid(alpha=0.5) {hybrid:.2f}"
    )
    assert hybrid >= fts
