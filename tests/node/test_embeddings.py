"""The node's embedder: the shipped model by default, ``memory.embedder``, reembed, failures."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import feral.storage.encoders.embedders as embedders
from feral.node.node import Node
from feral.node.settings.config import (
    MemorySettings,
    load_settings,
    save_settings,
    settings_from_dict,
)
from feral.storage.db.errors import ModelUnavailable
from feral.storage.encoders.onnx_model import OnnxEmbedder
from feral.sync.errors import ConfigError, NotAvailable
from tests.embedders import HashingEmbedder

from .support import Mesh, turn_off_embeddings

TRIP = "Booked flights to Lisbon for the June holiday"
DISTRACTORS = (
    "Replaced the kitchen tap that kept dripping",
    "Dentist appointment moved to Thursday afternoon",
    "Paid the electricity bill for March",
    "Finished the quarterly sales report for the board",
    "Bought a birthday present for Mum",
)
PARAPHRASE = "vacation travel plans"  # not one word in common with TRIP


def set_embedder(home: Path, name: str) -> None:
    settings = load_settings(home)
    memory = dataclasses.replace(settings.memory, embedder=name)
    save_settings(home, dataclasses.replace(settings, memory=memory))


@pytest.fixture
async def mesh(tmp_path: Path) -> AsyncIterator[Mesh]:
    """Home "a" with the default embedder (``Mesh.add`` turns embeddings off)."""
    mesh = Mesh(tmp_path)
    mesh.add("a")
    set_embedder(mesh.home("a"), MemorySettings().embedder)
    yield mesh
    await mesh.aclose()


async def diary(node: Node) -> str:
    """Store the trip among distractors; return the trip's id."""
    trip = await node.add_episode("s1", TRIP)
    for text in DISTRACTORS:
        await node.add_episode("s1", text)
    await node.embed_queued()
    return str(trip["id"])


# -- the default ---------------------------------------------------------------------------------


async def test_a_node_embeds_with_the_shipped_model_by_default(mesh: Mesh) -> None:
    node = await mesh.open("a")
    assert isinstance(node.embedder, OnnxEmbedder)
    await node.remember(("Alice", "likes", "coffee"))
    await node.add_episode("s1", "walked the dog in the park")
    assert (await node.stats())["embed_pending"] == 2  # writes do not wait for embedding
    assert await node.embed_queued() == 2
    stats = await node.stats()
    assert stats["vector_search"] == "on"
    assert stats["embedder"] == {"name": "minilm-l6-int8", "dim": 384}
    assert (stats["vectors"], stats["embed_pending"]) == (2, 0)


async def test_a_paraphrase_sharing_no_word_is_found_through_the_vector_leg(mesh: Mesh) -> None:
    node = await mesh.open("a")
    trip = await diary(node)
    fts = await node.search(PARAPHRASE, strategy="fts")
    assert trip not in [hit["id"] for hit in fts.results]
    for strategy in ("vector", "hybrid"):
        found = await node.search(PARAPHRASE, strategy=strategy, top_k=3, alpha=0.5)
        assert found.strategy == strategy
        assert found.results[0]["id"] == trip, strategy
        assert found.results[0]["fts_score"] == 0.0
        assert found.results[0]["vector_score"] > found.results[1]["vector_score"] + 0.2


async def test_the_embedder_argument_overrides_the_setting(mesh: Mesh) -> None:
    turn_off_embeddings(mesh.home("a"))
    node = await mesh.open("a", embedder=HashingEmbedder(16))
    assert node.embedder is not None and node.embedder.name == "hashing-16"


# -- memory.embedder -----------------------------------------------------------------------------


def test_memory_embedder_defaults_to_the_shipped_model() -> None:
    assert MemorySettings().embedder == "minilm-l6-int8"
    assert settings_from_dict({"memory": {"embedder": "minilm-static-256"}}).memory.embedder == (
        "minilm-static-256"
    )
    assert settings_from_dict({"memory": {"embedder": "none"}}).memory.embedder == "none"


@pytest.mark.parametrize("value", ["bogus", "", 42, None, ["none"], "None"])
def test_an_unknown_memory_embedder_is_refused_naming_the_key(value: object) -> None:
    with pytest.raises(ConfigError) as caught:
        settings_from_dict({"memory": {"embedder": value}}, source="settings.json")
    message = str(caught.value)
    assert message.startswith("settings.json: memory.embedder must be one of ")
    assert '"minilm-static-256", "none"' in message


async def test_embedder_none_turns_the_vector_leg_off_and_stats_say_why(mesh: Mesh) -> None:
    turn_off_embeddings(mesh.home("a"))
    node = await mesh.open("a")
    assert node.embedder is None
    await node.remember(("Alice", "likes", "coffee"))
    stats = await node.stats()
    assert stats["vector_search"] == (
        'off: no embedding model is configured (memory.embedder is "none")'
    )
    assert (stats["embedder"], stats["vectors"]) == (None, 0)
    assert (await node.search("coffee", strategy="hybrid")).strategy == "fts"


async def test_turning_embeddings_on_later_embeds_what_was_written_meanwhile(mesh: Mesh) -> None:
    turn_off_embeddings(mesh.home("a"))
    node = await mesh.open("a")
    trip = await diary(node)
    await node.close()
    set_embedder(mesh.home("a"), "minilm-l6-int8")
    node = await mesh.open("a")
    assert (await node.stats())["embed_pending"] == 1 + len(DISTRACTORS)  # queued at open
    await node.embed_queued()
    stats = await node.stats()
    assert (stats["vectors"], stats["embed_pending"]) == (1 + len(DISTRACTORS), 0)
    assert (await node.search(PARAPHRASE, strategy="vector")).results[0]["id"] == trip


# -- reembed -------------------------------------------------------------------------------------


async def test_reembed_rebuilds_every_vector_and_reports_progress(mesh: Mesh) -> None:
    node = await mesh.open("a")
    trip = await diary(node)
    await node.remember(("Alice", "likes", "coffee"))
    calls: list[tuple[int, int]] = []
    assert await node.reembed(lambda done, total: calls.append((done, total))) == 7
    assert calls[0] == (0, 7) and calls[-1] == (7, 7)
    stats = await node.stats()
    assert (stats["vectors"], stats["embed_pending"]) == (7, 0)
    assert stats["embedder"] == {"name": "minilm-l6-int8", "dim": 384}
    assert (await node.search(PARAPHRASE, strategy="vector")).results[0]["id"] == trip


async def test_reembed_replaces_vectors_made_by_another_model(mesh: Mesh) -> None:
    node = await mesh.open("a", embedder=HashingEmbedder(16))
    await diary(node)
    await node.close()
    node = await mesh.open("a")
    assert await node.reembed() == 1 + len(DISTRACTORS)
    assert (await node.stats())["embedder"] == {"name": "minilm-l6-int8", "dim": 384}


async def test_reembed_of_an_empty_store_does_nothing(mesh: Mesh) -> None:
    node = await mesh.open("a")
    assert await node.reembed() == 0
    assert (await node.stats())["vectors"] == 0


async def test_reembed_with_no_embedder_is_not_available(mesh: Mesh) -> None:
    turn_off_embeddings(mesh.home("a"))
    node = await mesh.open("a")
    with pytest.raises(NotAvailable, match="nothing to re-embed"):
        await node.reembed()


async def test_reembed_sends_nothing_to_peers(mesh: Mesh) -> None:
    node = await mesh.open("a")
    await diary(node)
    before = (await node.export_lines(), (await node.stats())["delta_log_entries"])
    await node.reembed()
    assert (await node.export_lines(), (await node.stats())["delta_log_entries"]) == before


# -- a missing model ------------------------------------------------------------------------------


async def test_a_missing_model_fails_node_open_with_a_clear_error(
    mesh: Mesh, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedders, "MODELS_DIR", tmp_path / "no-models")
    with pytest.raises(ModelUnavailable, match="the embedding model is unusable") as caught:
        await mesh.open("a")
    assert "config.json is missing" in str(caught.value)
    assert not (mesh.home("a") / "feral.db").exists()  # refused before the store was touched
    turn_off_embeddings(mesh.home("a"))
    assert (await mesh.open("a")).embedder is None  # the way out the message names
