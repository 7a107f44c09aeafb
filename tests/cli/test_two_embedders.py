"""Two devices with different embedders: each searches with its own vectors (issue #12).

Vectors are derived and local: they never travel. The laptop runs the default sentence encoder
(384 dimensions), the phone the light static model (256): after a sync each finds, by meaning,
what the other wrote, and each database holds vectors of its own model only. Real processes: a
phone's `serve`, the laptop's `sync now`, then `memory search` on both.
"""

from __future__ import annotations

import json
import time

import pytest

from feral.storage.encoders.embedders import DEFAULT_EMBEDDER

from .servers import STATIC_EMBEDDER, Mesh, pair

TYRES = "The car is booked in for winter tyres at the garage on Tuesday"
DENTIST = "Priya's dentist check-up is next Thursday morning"


@pytest.mark.slow
def test_two_devices_with_different_embedders_each_search_with_their_own_vectors(
    mesh: Mesh,
) -> None:
    (laptop,) = mesh.add("laptop", embedder=DEFAULT_EMBEDDER)
    (phone,) = mesh.add("phone", embedder=STATIC_EMBEDDER)
    pair(laptop, phone, dial=True)
    pair(phone, laptop, dial=False)
    laptop.run("memory", "remember", TYRES)
    phone.run("memory", "remember", DENTIST)
    mesh.start(phone)
    laptop.run("sync", "now")  # a command that wrote embeds what it merged before it ends
    deadline = time.monotonic() + 120  # the phone's serve embeds what arrived, in the background
    while json.loads(phone.run("memory", "stats", "--json").stdout)["embed_pending"]:
        assert time.monotonic() < deadline, "the phone's serve never embedded the laptop's row"
        time.sleep(0.2)
    mesh.stop_all()
    found = {
        node.name: json.loads(
            node.run("memory", "search", query, "--strategy", "vector", "--json").stdout
        )["results"][0]["content"]
        for node, query in ((phone, "vehicle maintenance appointment"),
                            (laptop, "teeth appointment"))
    }  # fmt: skip
    assert "winter tyres" in found["phone"] and "dentist" in found["laptop"], found
    stats = {n.name: json.loads(n.run("memory", "stats", "--json").stdout) for n in (laptop, phone)}
    assert stats["laptop"]["embedder"] == {"name": DEFAULT_EMBEDDER, "dim": 384}
    assert stats["phone"]["embedder"] == {"name": STATIC_EMBEDDER, "dim": 256}
    for name in ("laptop", "phone"):  # both rows, each embedded here by the device's own model
        assert stats[name]["vectors"] == 2 and stats[name]["embed_pending"] == 0
