"""A device back from longer than the retention window, as real ``feral`` processes (issue 23,
#1 and #4).

The phone archives a memory while offline; meanwhile the laptop nukes it, and the laptop and
the server prune past the window (the phone, silent longer than it, no longer holds pruning
back). When the phone comes back, its `sync now` succeeds (no "diverged"), the nuke wins over
its older archive everywhere, and no file of any device holds the words again.
"""

from __future__ import annotations

import dataclasses
import json
import time

import pytest

from feral.node.settings.config import load_settings, save_settings

from .servers import FeralNode, Mesh, pair_dialing
from .test_nuke_processes import SECRET, files_holding, remember

RETENTION_DAYS = 2e-5
"""About 1.7 s: what is written before the test waits is older than the window after it."""


def short_window(node: FeralNode) -> None:
    settings = load_settings(node.home)
    sync = dataclasses.replace(settings.sync, retention_days=RETENTION_DAYS)
    save_settings(node.home, dataclasses.replace(settings, sync=sync))


def row_of(node: FeralNode, row_id: str) -> dict[str, object]:
    rows = [json.loads(line) for line in node.export().splitlines()]
    (row,) = [r for r in rows if r["id"] == row_id]
    return row


@pytest.mark.slow
def test_a_device_back_from_past_the_window_neither_diverges_nor_brings_a_nuke_back(
    mesh: Mesh,
) -> None:
    laptop, phone, server = mesh.add("laptop", "phone", "server")
    for node in (laptop, phone, server):
        short_window(node)
    pair_dialing(laptop, server)
    pair_dialing(phone, server)
    secret_id = remember(laptop, f"the alarm code is {SECRET}")
    mesh.start(server)
    laptop.run("sync", "now")
    phone.run("sync", "now")
    assert SECRET in phone.export(), "the secret never reached the phone: this proves nothing"

    phone.run("memory", "forget", secret_id)  # offline: its own edit, unsent
    laptop.run("memory", "nuke", secret_id, "--yes")
    laptop.run("sync", "now")
    time.sleep(RETENTION_DAYS * 86_400 * 2)
    laptop.run("sync", "now")  # a fresh acknowledgement from the server, past the window
    for node in (laptop, server):
        node.run("sync", "prune")

    came_back = phone.run("sync", "now", check=False)
    assert came_back.returncode == 0, came_back.stdout + came_back.stderr
    # One line says what happened: the server's log could not serve it, a snapshot did.
    (line,) = came_back.stdout.splitlines()
    assert "by snapshot" in line and line.endswith("ok"), line
    assert "by snapshot" not in laptop.run("sync", "now").stdout  # the log served the laptop
    for node in (laptop, phone, server):
        assert row_of(node, secret_id)["deleted"], f"{node.name} holds the nuked row live"
        assert files_holding(node, SECRET) == [], node.name
    assert laptop.export() == phone.export() == server.export()
    assert "diverged" not in phone.run("sync", "status").stdout.lower()
