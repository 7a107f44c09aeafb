"""A nuke against a concurrent archive of its row, as real ``feral`` processes (issue 23, #3).

The phone, offline, archives a memory the laptop has just nuked; its archive is stamped later.
When they meet, the nuke must win on both (docs/REPLICATION.md §3, "Tombstones win"): no device
holds the row live, no file of either holds its words, and remembering the same words again
afterwards makes a new row that syncs like any other.
"""

from __future__ import annotations

import json

import pytest

from .servers import Mesh, pair
from .test_nuke_processes import SECRET, files_holding, remember


@pytest.mark.slow
def test_an_archive_made_offline_after_a_nuke_does_not_bring_the_row_back(mesh: Mesh) -> None:
    laptop, phone = mesh.add("laptop", "phone")
    pair(laptop, phone, dial=True)
    pair(phone, laptop, dial=False)
    secret_id = remember(laptop, f"the safe code is {SECRET}")
    mesh.start(phone)
    laptop.run("sync", "now")
    phone.stop()
    assert SECRET in phone.export(), "the secret never reached the phone: this proves nothing"

    laptop.run("memory", "nuke", secret_id, "--yes")
    phone.run("memory", "forget", secret_id)  # offline, later: it never heard of the nuke
    mesh.start(phone)
    laptop.run("sync", "now")

    for node in (laptop, phone):
        rows = [json.loads(line) for line in node.export().splitlines()]
        (row,) = [r for r in rows if r["id"] == secret_id]
        assert row["deleted"], f"{node.name} holds the nuked row live"
        assert files_holding(node, SECRET) == [], node.name
    assert laptop.export() == phone.export()

    again = remember(laptop, f"the safe code is {SECRET}")
    assert again != secret_id  # a row of its own: the nuked one cannot come back
    laptop.run("sync", "now")
    assert again in phone.export()
