"""Search by meaning works on a fresh install with no network at all.

Every step runs as a real ``feral`` process, as a user runs it: ``init``, an ``import`` of
look-alike notes, ``remember`` and ``search``. Each process runs in a new network namespace
(``unshare -rn``: nothing but a loopback that is down) where the system allows it; elsewhere a
``sitecustomize`` on the path makes every socket connection raise, so a model or tokenizer that
tried to reach a hub would fail the test instead of quietly downloading.

The query shares no word with the memory it must find, and the store holds more than fifty
look-alikes that share the query's words (appointments, maintenance, vehicles) or the memory's
(the car, the garage, bookings, Tuesday, winter), so neither leg can find it by words alone.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .helpers import feral_command

QUERY = "vehicle maintenance appointment"
MEMORY = "The car is booked in for winter tyres at the garage on Tuesday"

LOOK_ALIKES = [
    "Dentist appointment with Dr. Patel on Tuesday at 9:15",
    "Vet appointment for the dog on Thursday afternoon",
    "The GP appointment was moved to next Monday",
    "Hair appointment at the salon on Saturday morning",
    "Booked an appointment at the bank to discuss the mortgage",
    "Optician appointment for Maya's eye test in March",
    "Physio appointment for my knee every Wednesday",
    "The vehicle registration document is in the filing cabinet",
    "Vehicle excise duty reminder letter arrived",
    "The council's vehicle permit for our street expires in May",
    "Maintenance charge for the flat is due in March",
    "The lift in the office is closed for maintenance all week",
    "Garden maintenance: trim the hedge and mow the lawn",
    "The boiler maintenance contract renews in October",
    "Website maintenance window is on Sunday night",
    "Pool maintenance at the leisure centre means no swimming on Friday",
    "The garage door remote needs a new battery",
    "Cleared out the garage and took boxes to the tip",
    "The garage roof leaks when it rains hard",
    "Parked the bikes in the garage for the winter",
    "Winter coats and boots are in the loft",
    "Winter holiday in the Alps is booked for February",
    "Bought a winter duvet for the spare room",
    "The car insurance renews on 1 September with Admiral",
    "The car smells of wet dog after the beach",
    "Sam's car is a Nissan Leaf, bought second-hand",
    "Left my sunglasses in the car",
    "The car park at the station is closed on Tuesday",
    "Car boot sale at the school on Sunday",
    "Booked a table at Luca's for Friday night",
    "Booked the trampoline park for Maya's birthday party",
    "Booked flights to Lisbon for the June holiday",
    "Booked the dog sitter for the Lisbon trip",
    "Booked a cottage on Skye for half term",
    "The piano lesson moved to Tuesday this week",
    "Bin collection is on Tuesday morning",
    "Football training for Leo is on Tuesday at 5",
    "Tuesday is pasta night",
    "Bought new tyres for Maya's bike",
    "The pram tyres need pumping up",
    "The wheelbarrow has a flat tyre",
    "Fixed a puncture on my road bike",
    "The bike shop serviced my road bike: new chain and cassette",
    "The washing machine engineer comes on Thursday",
    "The boiler service is booked for 10 September",
    "The chimney sweep is coming next month",
    "Paid the road tax for another twelve months",
    "Got a parking fine outside the school",
    "The train strike means working from home next week",
    "Renewed the breakdown cover with the AA",
    "Lost the spare key for the Golf",
    "The dashcam footage saves to a memory card",
    "The laptop repair shop says the screen replacement takes a week",
    "The phone screen cracked; the repair is booked for Friday",
    "Appointment letter from the sleep clinic should arrive soon",
]

SITECUSTOMIZE = """\
import socket


def _refuse(*args, **kwargs):
    raise OSError("network access blocked by the offline test")


socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
socket.create_connection = _refuse
socket.getaddrinfo = _refuse
"""


def _namespace_works() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    probe = subprocess.run([unshare, "-rn", "true"], capture_output=True, timeout=30)
    return probe.returncode == 0


def offline(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    """The command prefix and environment that run a process with no network."""
    env = {**os.environ, "FERAL_HOME": str(tmp_path / "home")}
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HOME"):
        env.pop(name, None)  # offline by having no network, not by a setting
    if _namespace_works():
        return ["unshare", "-rn"], env
    blocker = tmp_path / "blocker"
    blocker.mkdir(exist_ok=True)
    (blocker / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(blocker), env.get("PYTHONPATH")]))
    return [], env


def run(tmp_path: Path, *args: str) -> str:
    prefix, env = offline(tmp_path)
    done = subprocess.run(
        [*prefix, *feral_command(), *args], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_a_memory_worded_differently_is_found_offline_among_look_alikes(tmp_path: Path):
    notes = tmp_path / "notes.txt"
    notes.write_text("\n".join(LOOK_ALIKES) + "\n")
    run(tmp_path, "init")
    run(tmp_path, "memory", "import", str(notes))
    target = json.loads(run(tmp_path, "memory", "remember", MEMORY, "--json"))["id"]
    found = json.loads(run(tmp_path, "memory", "search", QUERY, "--json"))
    ranked = [hit["id"] for hit in found["results"]]
    assert found["strategy"] == "hybrid" and found["notes"] == []
    assert target in ranked[:5], [hit["content"] for hit in found["results"][:5]]


def test_the_look_alikes_are_many_and_the_memory_shares_no_word_with_the_query():
    from benchmarks.retrieval_set import shared_content_words

    assert len(set(LOOK_ALIKES)) == len(LOOK_ALIKES) >= 50
    assert shared_content_words(QUERY, MEMORY) == []
    assert sum(bool(shared_content_words(QUERY, note)) for note in LOOK_ALIKES) >= 15
