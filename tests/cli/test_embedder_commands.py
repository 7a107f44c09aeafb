"""``feral memory stats`` and ``feral memory reembed`` with the shipped embedding model."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

import feral.storage.encoders.embedders as embedders

from .helpers import feral, feral_json, init_home, turn_off_embeddings


@pytest.fixture(autouse=True)
def _initialised(tmp_path: Path) -> None:
    """Every case's home made by ``feral init`` first: no other command makes one."""
    init_home(tmp_path)
    init_home(tmp_path / "home")


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


LOOK_ALIKES = [  # other bookings, Tuesdays, garages, cars and winters
    *(f"Booked a table at the {place} on Tuesday" for place in (
        "Italian restaurant", "sushi bar", "pub by the river", "tapas place", "pizzeria",
    )),
    "The dentist appointment is on Tuesday",
    "The bike tyres are flat again",
    "Parked outside the bakery on Tuesday",
    "Tuesday is bin day",
    "The garden centre opens at nine",
    "Booked the kids into the winter holiday club",
    "The GP appointment moved to Friday",
    *(f"The car {what}" for what in (
        "park at the station is closed", "seats need cleaning", "radio is stuck on one station",
        "key is in the blue bowl", "insurance letter came today",
    )),
    *(f"{thing} is booked for {when}" for thing in (
        "The hotel in Porto", "The train to Leeds", "The village hall", "Swimming lessons",
        "The piano tuner", "The window cleaner",
    ) for when in ("Tuesday", "next weekend")),
    *(f"The garage {what}" for what in (
        "door needs oiling", "is full of boxes", "light is broken", "roof leaks in winter",
    )),
    *(f"{who} bought a new {what}" for who in ("Sam", "Priya", "Grandpa") for what in (
        "winter coat", "bike", "kettle", "lawnmower",
    )),
    *(f"Winter {what}" for what in (
        "holiday in the Alps is planned", "boots are in the attic", "heating bill was high",
    )),
    *(f"Picked up {what} on Tuesday" for what in (
        "the dry cleaning", "a parcel", "the kids from school", "groceries", "a prescription",
    )),
]  # fmt: skip


def test_a_paraphrase_is_found_among_look_alikes_with_no_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh home, every network connection and name lookup refused: the shipped encoder
    needs nothing from outside."""

    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: object) -> None:
        if self.family != socket.AF_UNIX:
            raise AssertionError(f"feral tried to connect to {address!r}")
        real_connect(self, address)  # type: ignore[arg-type]

    def resolve(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"feral tried to resolve {args!r}")

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    assert len(LOOK_ALIKES) >= 50
    distractors = tmp_path / "look-alikes.txt"
    distractors.write_text("\n".join(LOOK_ALIKES) + "\n", encoding="utf-8")
    home = tmp_path / "home"
    assert feral(home, "memory", "import", str(distractors)).exit_code == 0
    car = feral_json(
        home, "memory", "remember", "The car is booked in for winter tyres at the garage on Tuesday"
    )
    found = feral_json(
        home, "memory", "search", "vehicle maintenance appointment", "--strategy", "vector"
    )
    assert isinstance(car, dict) and isinstance(found, dict)
    assert car["id"] in [hit["id"] for hit in found["results"][:5]]
    stats = feral_json(home, "memory", "stats")
    assert isinstance(stats, dict) and stats["embedder"]["name"] == "minilm-l6-int8"


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
