"""Ingest extracts facts from users' messages (node/assistant/ingest_facts.py,
node/absorb/absorb_batch.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from feral.node.assistant.ingest_facts import message_facts, sentences
from feral.node.assistant.working_memory import Message
from feral.node.node import Node
from feral.storage.memory import memories
from feral.storage.memory.memory_model import edges_of
from feral.sync.ids import edge_id, fact_id
from feral.sync.schema import FACTS

from .support import Mesh

TRANSCRIPT = (
    Message("clinic", "user", "My doctor is Dr. Chen. My sister's doctor is Dr. Lee."),
    Message("clinic", "assistant", "Noted. Your dentist is Dr. Patel, and my name is Ada."),
    Message("clinic", "assistant", "My doctor is Dr. Gray."),
    Message("clinic", "user", "Thanks! I live in Porto"),
    Message("clinic", "user", "hello there"),
    Message("errands", "User", "Bob's employer is Acme Logistics."),
)


@pytest.fixture
async def node(tmp_path: Path) -> AsyncIterator[Node]:
    mesh = Mesh(tmp_path)
    mesh.add("a")
    yield await mesh.open("a")
    await mesh.aclose()


async def live_facts(node: Node) -> dict[tuple[str, str, str], dict]:
    rows = await node.store.read(memories.list_live, FACTS)
    return {(r["subject"], r["predicate"], r["object"]): r for r in rows}


async def test_users_facts_become_facts_of_their_episode_and_look_alikes_stay_apart(node: Node):
    result = await node.ingest(TRANSCRIPT)
    assert (result.messages, result.sessions, result.facts) == (6, 2, 4)
    facts = await live_facts(node)
    assert set(facts) == {
        ("user", "doctor", "Dr. Chen"),
        ("user", "sister_doctor", "Dr. Lee"),
        ("user", "lives_in", "Porto"),
        ("Bob", "employer", "Acme Logistics"),
    }
    episodes = {e["session_id"]: e["id"] for e in await node.episodes()}
    for triple, row in facts.items():
        session = "errands" if triple[0] == "Bob" else "clinic"
        assert row["source_episode"] == episodes[session], triple


async def test_facts_said_in_one_message_are_linked_co_extracted(node: Node):
    await node.ingest(TRANSCRIPT)
    chen, lee = sorted(
        [fact_id("user", "doctor", "Dr. Chen"), fact_id("user", "sister_doctor", "Dr. Lee")]
    )
    edges = await node.store.read(edges_of, chen)
    assert [(e["id"], e["type"]) for e in edges] == [
        (edge_id("co_extracted", chen, lee), "co_extracted")
    ]
    porto = fact_id("user", "lives_in", "Porto")
    assert await node.store.read(edges_of, porto) == []  # said alone


async def test_ingesting_the_same_transcript_again_adds_no_fact_or_edge(node: Node):
    await node.ingest(TRANSCRIPT)
    before = await node.export_lines()
    again = await node.ingest(TRANSCRIPT)
    assert again.facts == 4
    after = await node.export_lines()
    assert kept(after) == kept(before) and len(kept(before)) == 5  # four facts, one edge


def kept(lines: list[str]) -> list[str]:
    return [line for line in lines if '"table":"facts"' in line or '"table":"edges"' in line]


def test_sentences_do_not_end_at_a_title():
    assert sentences("My GP is Dr. Chen. Mrs. Lee is my aunt!\nI live in Porto") == [
        "My GP is Dr. Chen.",
        "Mrs. Lee is my aunt!",
        "I live in Porto",
    ]


def test_only_user_messages_state_facts():
    said = "My doctor is Dr. Chen"
    assert message_facts(Message("s", "user", said)) == [("user", "doctor", "Dr. Chen")]
    assert message_facts(Message("s", "assistant", said)) == []
    assert message_facts(Message("s", "system", said)) == []


async def test_extracted_facts_go_through_the_pipeline_a_new_value_supersedes(node: Node):
    chen = await node.absorb(text="my doctor is Dr. Chen")
    transcript = (
        Message("clinic", "user", "My doctor is now Dr. Lee. My doctor's name is Dr. Lee."),
        Message("clinic", "user", "I live in Porto."),
    )
    result = await node.ingest(transcript)
    assert result.facts == 3  # the repeat of the new value counted, not written
    facts = await live_facts(node)
    assert ("user", "doctor", "Dr. Chen") not in facts
    lee = facts[("user", "doctor", "Dr. Lee")]
    assert ("user", "doctor_name", "Dr. Lee") not in facts  # a duplicate of the slot's value
    (episode,) = await node.episodes()
    assert lee["source_episode"] == episode["id"]
    edges = await node.store.read(edges_of, lee["id"])
    assert {(e["type"], e["to_id"]) for e in edges if e["type"] == "supersedes"} == {
        ("supersedes", chen.memory_id)
    }
    archived = await node.get(chen.memory_id)
    assert archived["archived"] is True


def test_each_clause_of_a_users_sentence_is_a_fact_of_its_own():
    said = Message(
        "s", "user", "I live in Lisbon now and my dentist is Dr. Silva. My doctor is away."
    )
    assert message_facts(said) == [
        ("user", "lives_in", "Lisbon"),
        ("user", "dentist", "Dr. Silva"),
        ("user", "doctor_state", "away"),
    ]
