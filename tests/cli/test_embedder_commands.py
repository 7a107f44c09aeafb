"""``feral memory stats`` and ``feral memory reembed`` with the shipped embedding model."""

from __future__ import annotations

from pathlib import Path

import pytest

import feral.storage.embedders as embedders

from .helpers import feral, feral_json, turn_off_embeddings


def test_a_fresh_home_searches_by_meaning_out_of_the_box(tmp_path: Path) -> None:
    trip = feral_json(
        tmp_path, "memory", "remember", "Booked flights to Lisbon for the June holiday"
    )
    feral_json(tmp_path, "memory", "remember", "Replaced the kitchen tap that kept dripping")
    found = feral_json(
        tmp_path, "memory", "search", "vacation travel plans", "--strategy", "vector"
    )
    assert isinstance(trip, dict) and isinstance(found, dict)
    assert found["results"][0]["id"] == trip["id"]


def test_stats_show_the_shipped_embedder(tmp_path: Path) -> None:
    feral_json(tmp_path, "memory", "remember", "my doctor is Dr. Chen")
    stats = feral_json(tmp_path, "memory", "stats")
    assert isinstance(stats, dict)
    assert stats["vector_search"] == "on"
    assert stats["embedder"] == {"name": "minilm-l6-int8", "dim": 384}
    table = feral(tmp_path, "memory", "stats").stdout
    assert "vector search  on\n" in table
    assert "embedder       minilm-l6-int8 (384 dims), 1 vectors\n" in table


def test_stats_say_when_kept_vectors_are_not_in_use(tmp_path: Path) -> None:
    feral_json(tmp_path, "memory", "remember", "my doctor is Dr. Chen")
    turn_off_embeddings(tmp_path)
    table = feral(tmp_path, "memory", "stats").stdout
    assert 'vector search  off: no embedding model is configured (memory.embedder is "none")' in (
        table
    )
    assert "1 vectors (kept, not in use)" in table


def test_reembed_rebuilds_the_vectors_and_says_how_many(tmp_path: Path) -> None:
    for text in ("my doctor is Dr. Chen", "walk the dog at six", "the sky is blue"):
        feral_json(tmp_path, "memory", "remember", text)
    result = feral(tmp_path, "memory", "reembed")
    assert result.exit_code == 0, result.output
    assert result.stdout == "Re-embedded 3 row(s) with minilm-l6-int8 (384 dims)\n"
    assert feral_json(tmp_path, "memory", "reembed") == {
        "embedded": 3,
        "embedder": {"name": "minilm-l6-int8", "dim": 384},
    }
    stats = feral_json(tmp_path, "memory", "stats")
    assert isinstance(stats, dict)
    assert (stats["vectors"], stats["embed_pending"]) == (3, 0)


def test_reembed_with_embeddings_off_is_one_line_and_exit_1(tmp_path: Path) -> None:
    turn_off_embeddings(tmp_path)
    result = feral(tmp_path, "memory", "reembed")
    assert result.exit_code == 1
    assert result.stderr == (
        'Error: nothing to re-embed: vector search is off (memory.embedder is "none")\n'
    )


def test_a_missing_model_is_one_line_naming_the_way_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedders, "MODELS_DIR", tmp_path / "gone")
    result = feral(tmp_path / "home", "memory", "stats")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("Error: the embedding model is unusable: ")
    assert '"minilm-static-256" (the light model) or "none"' in lines[0]


def test_an_unknown_embedder_in_settings_is_one_line_naming_the_key(tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "settings.json").write_text('{"memory": {"embedder": "gpt"}}', encoding="utf-8")
    result = feral(tmp_path, "memory", "stats")
    assert result.exit_code == 1
    assert "memory.embedder must be one of" in result.stderr
    assert result.stderr.count("\n") == 1
