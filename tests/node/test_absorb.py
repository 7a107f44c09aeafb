"""The absorb pipeline on a real node with the default encoder: each classification, the rows
and edges it writes, and the look-alikes it must keep apart (benchmarks/absorb/)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from benchmarks.absorb_bench import load_pairs, pair_candidates
from feral.node.absorb.classify import decide, fact_text
from feral.node.absorb.phrases import parse_fact
from feral.node.curation.memory_graph import conflicting_values, follow
from feral.node.node import Node
from feral.storage.encoders.embedders import load_embedder
from feral.storage.memory.memory_model import read_meta
from feral.storage.vectors.vectors import queue_length
from feral.sync.errors import InvalidInput

from .support import turn_off_embeddings


@pytest.fixture
async def node(tmp_path: Path) -> AsyncIterator[Node]:
    opened = await Node.open(tmp_path, embedder=load_embedder())
    yield opened
    await opened.close()


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / ((sum(x * x for x in a) * sum(y * y for y in b)) ** 0.5)


def test_no_look_alike_is_merged_and_an_unmerged_rephrasing_is_kept_linked_or_replaces():
    embedder = load_embedder()
    assert embedder is not None
    merged_lookalikes, unlinked, merged = [], [], 0
    for pair in load_pairs():
        stored, new = parse_fact(pair.a), parse_fact(pair.b)
        va, vb = embedder.embed([fact_text(*stored), fact_text(*new)])
        verdict = decide(pair_candidates(stored, new, _cosine(va, vb))).classification
        if verdict == "duplicate" and not pair.duplicate:
            merged_lookalikes.append((pair.a, pair.b))
        if pair.duplicate and verdict not in ("duplicate", "related", "supersede"):
            unlinked.append((pair.a, pair.b, verdict))
        merged += verdict == "duplicate" and pair.duplicate
    assert merged_lookalikes == [] and unlinked == []
    assert merged >= 9  # the same words said again still merge (24 rephrasings in the set)


async def test_near_duplicates_merge_into_the_stored_fact(node: Node):
    first = await node.absorb(text="I love green tea")
    assert first.classification == "new"
    for text in ("I really like green tea", "I like green tea a lot"):
        again = await node.absorb(text=text)
        assert (again.classification, again.memory_id) == ("duplicate", first.memory_id)
        assert again.duplicates_merged == 1 and again.edges == []
    stats = await node.stats()
    assert stats["tiers"]["semantic"]["live"] == 1


async def test_different_doctors_and_birthdays_are_never_merged(node: Node):
    alice = await node.absorb(text="Alice's birthday is on May 4")
    bob = await node.absorb(text="Bob's birthday is on May 4")
    assert bob.classification != "duplicate" and bob.memory_id != alice.memory_id
    later = await node.absorb(text="Alice's birthday is on May 5")
    assert later.classification == "supersede"
    assert [e["to_id"] for e in later.edges] == [alice.memory_id]
    chen = await node.absorb(text="my doctor is Dr. Chen")
    lee = await node.absorb(text="my doctor is now Dr. Lee")
    assert lee.classification == "supersede" and lee.memory_id != chen.memory_id
    live = {r["object"] for r in await node.store.read(_live_facts)}
    assert live == {"May 4", "May 5", "Dr. Lee"}  # Bob's May 4, Alice's May 5


def _live_facts(conn):
    return [
        {"object": r[0]}
        for r in conn.execute("SELECT object FROM facts WHERE archived = 0 AND deleted = 0")
    ]


async def test_a_new_value_supersedes_the_old_which_is_archived_not_overwritten(node: Node):
    chen = await node.absorb(text="my doctor's name is Dr. Chen")
    lee = await node.absorb(text="my doctor is now Dr. Lee")
    assert lee.classification == "supersede" and lee.duplicates_merged == 0
    assert [(e["type"], e["from_id"], e["to_id"]) for e in lee.edges] == [
        ("supersedes", lee.memory_id, chen.memory_id)
    ]
    old = await node.get(chen.memory_id)
    assert old["archived"] is True and old["object"] == "Dr. Chen"
    shown = await follow(node, lee.memory_id, "full_history")
    assert [r["id"] for r in shown["history"]] == [chen.memory_id]
    assert shown["conflicting"] is False and shown["current_values"] == [lee.memory_id]
    same = await node.absorb(text="my doctor's name is Dr. Lee")  # the same slot and value
    assert (same.classification, same.memory_id) == ("duplicate", lee.memory_id)


async def test_history_follows_a_chain_of_supersedes(node: Node):
    ids = [
        (await node.absorb(text=f"I live in {city}")).memory_id
        for city in ("Porto", "Lisbon", "Berlin")
    ]
    shown = await follow(node, ids[-1], "full_history")
    assert [(r["id"], r["superseded_by"]) for r in shown["history"]] == [
        (ids[1], ids[2]),
        (ids[0], ids[1]),
    ]
    assert "history" not in await follow(node, ids[-1], "edges")
    assert set(await follow(node, ids[-1], "none")) == {"record", "current_values", "conflicting"}


async def test_an_opposite_is_a_contradiction_and_both_stay(node: Node):
    likes = await node.absorb(text="I like green tea")
    dislikes = await node.absorb(text="I don't like green tea")
    assert dislikes.classification == "contradict"
    assert [(e["type"], e["to_id"]) for e in dislikes.edges] == [("contradicts", likes.memory_id)]
    assert not (await node.get(likes.memory_id))["archived"]
    nurse = await node.absorb(text="Alice is a nurse")
    assert (await node.absorb(text="Alice is not a nurse")).edges[0]["to_id"] == nurse.memory_id


async def test_a_third_party_fact_is_about_them_and_related_to_the_users(node: Node):
    mine = await node.absorb(text="I like green tea")
    bobs = await node.absorb(text="Bob likes green tea")
    assert (bobs.row["subject"], bobs.row["predicate"], bobs.row["object"]) == (
        "Bob",
        "likes",
        "green tea",
    )
    assert bobs.classification == "related"
    assert [(e["type"], e["to_id"]) for e in bobs.edges] == [("related_to", mine.memory_id)]


async def test_each_fact_gets_a_category_and_its_vector_with_the_write(node: Node):
    cases = {
        "my birthday is March 3": "identity",
        "I like jazz": "preference",
        "my doctor is Dr. Chen": "context",
        "always answer in French": "directive",
        "buy oat milk": "note",
    }
    for text, category in cases.items():
        answer = await node.absorb(text=text)
        meta = await node.store.read(read_meta, answer.memory_id)
        assert meta.category == category, text
    assert await node.store.read(queue_length) == 0  # embedded before the write, stored with it


async def test_two_live_values_of_one_slot_are_flagged_as_conflicting(node: Node):
    # Written as an export's facts are, unclassified: two live values, as two offline devices
    # that each superseded the same doctor leave them (import classifies: Patel would win).
    both = [("user", "doctor", "Dr. Lee"), ("user", "doctor", "Dr. Patel")]
    await node.import_facts(both, classify=False)
    conflicts = await node.store.read(conflicting_values)
    assert [(c["subject"], c["predicate"], len(c["ids"])) for c in conflicts] == [
        ("user", "doctor", 2)
    ]
    assert (await node.stats())["conflicting_values"] == 1
    one = await follow(node, conflicts[0]["ids"][0], "edges")
    assert one["conflicting"] is True and sorted(one["current_values"]) == conflicts[0]["ids"]
    newest = await node.absorb(text="my doctor is Dr. Kim")  # supersedes both: resolved
    assert sorted(e["to_id"] for e in newest.edges) == conflicts[0]["ids"]
    assert (await node.stats())["conflicting_values"] == 0


async def test_empty_input_is_refused_before_anything_is_written(node: Node):
    for text, triple in (("  ", None), (None, ("user", " ", "x")), (None, None)):
        with pytest.raises(InvalidInput):
            await node.absorb(text=text, triple=triple)
    assert (await node.stats())["delta_log_entries"] == 0


async def test_without_a_model_exact_duplicates_slots_and_opposites_still_classify(tmp_path):
    turn_off_embeddings(tmp_path)
    node = await Node.open(tmp_path)
    try:
        assert node.embedder is None
        first = await node.absorb(text="my doctor is Dr. Chen")
        assert (
            await node.absorb(text="my doctor's name is Dr. Chen")
        ).classification == "duplicate"
        assert (await node.absorb(text="my doctor is Dr. Lee")).classification == "supersede"
        assert (await node.get(first.memory_id))["archived"] is True
        await node.absorb(text="I like olives")
        assert (await node.absorb(text="I hate olives")).classification == "contradict"
        assert (await node.absorb(text="I like green olives")).classification == "new"
    finally:
        await node.close()


def test_a_number_only_one_text_holds_keeps_look_alikes_apart():
    stored, new = (
        parse_fact("fact number 5 about topic 5"),
        parse_fact("fact number 102 about topic 5"),
    )
    candidates = pair_candidates(stored, new, 0.9)
    assert decide(candidates).classification != "duplicate"
    queued = pair_candidates(stored, new, 0.9)
    queued.neighbours[0] = (queued.neighbours[0][0], None)  # no vector yet: words alone
    assert decide(queued).classification != "duplicate"
