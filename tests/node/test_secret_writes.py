"""Every ``Node`` method that writes user text refuses a secret before its transaction."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from feral.node.assistant.working_memory import Message
from feral.node.curation.actions import boost
from feral.node.curation.memory_graph import link
from feral.node.node import Node
from feral.node.recall.graph import add_entity, relate
from feral.node.secrets.scan import SecretRefused

from .support import ManualClock, Mesh, now_ms, turn_off_embeddings

KEY = "ghp_" + "Zq7Lk2Xw9Pm4Rt6Yv8Bn3Cd5Fg1Hj0Ks7Qa3"  # 36 after the prefix


@pytest.fixture
async def node(tmp_path: Path) -> AsyncIterator[Node]:
    mesh = Mesh(tmp_path)
    mesh.add("a")
    turn_off_embeddings(mesh.home("a"))
    yield await mesh.open("a", now_ms=ManualClock(now_ms()))
    await mesh.aclose()


async def rows(node: Node) -> str:
    return "".join(await node.export_lines())


async def test_remember_and_absorb_refuse_before_writing(node: Node) -> None:
    with pytest.raises(SecretRefused, match="GitHub token"):
        await node.remember(("user", "note", f"deploy with {KEY}"))
    with pytest.raises(SecretRefused, match="a password"):
        await node.absorb("my email password is Qx7-lantern-88")
    assert await rows(node) == ""


async def test_episodes_and_the_execution_log_refuse_a_secret(node: Node) -> None:
    with pytest.raises(SecretRefused):
        await node.add_episode("s1", f"the user pasted {KEY}", ["GitHub"])
    with pytest.raises(SecretRefused):
        await node.log_execution(
            "s1", "http", args={"auth": f"Bearer {KEY}"}, result="ok", latency_ms=3, success=True
        )
    assert await rows(node) == ""


async def test_import_facts_refuses_the_batch_naming_the_item(node: Node) -> None:
    triples = [("user", "note", "buy milk"), ("user", "note", "call Ana"), ("ci", "token", KEY)]
    with pytest.raises(SecretRefused, match=r"^item 3: refused: .*GitHub token"):
        await node.import_facts(triples)
    assert await rows(node) == ""
    assert await node.import_facts(triples[:2]) == 2


async def test_ingest_refuses_at_the_message_holding_a_secret(node: Node) -> None:
    messages = [Message("s", "user", "hello"), Message("s", "user", f"key {KEY}")]
    with pytest.raises(SecretRefused, match=r"^message 2: "):
        await node.ingest(messages)
    assert KEY[4:14] not in await rows(node)


async def test_a_link_note_and_a_boost_reason_refuse_a_secret(node: Node) -> None:
    first = await node.remember(("user", "note", "the router is in the hall"))
    second = await node.remember(("user", "note", "the router needs a reboot weekly"))
    before = await rows(node)
    with pytest.raises(SecretRefused, match="a password"):
        await link(node, first["id"], second["id"], "related_to", "wifi password: Sunflower-2291")
    with pytest.raises(SecretRefused, match="passcode or PIN"):
        await boost(node, first["id"], 2.0, "the door code is 4821")
    assert await rows(node) == before
    await link(node, first["id"], second["id"], "related_to", "same router")
    await boost(node, first["id"], 2.0, "asked about it daily")


async def test_graph_entities_and_relations_refuse_a_secret(node: Node) -> None:
    with pytest.raises(SecretRefused, match="GitHub token"):
        await add_entity(node, "service", f"ci {KEY}")
    with pytest.raises(SecretRefused, match="a password"):
        await relate(node, "person:Sam", "wifi_password", "thing:Sunflower-2291")
    with pytest.raises(SecretRefused, match="GitHub token"):
        await relate(node, "person:Sam", "uses", f"thing:{KEY}")
    assert await rows(node) == ""
    await relate(node, "person:Sam", "lives_in", "place:Porto")
