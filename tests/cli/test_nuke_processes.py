"""``feral memory nuke`` erases, on every device, as real ``feral`` processes (issue 11, #8).

A nuked memory must leave no trace of its words in any file of any device that held it: not in
the database file or its WAL (the log payloads, the full-text index, freed pages), not in the
wiki, not in the export; and a device paired after the nuke must never receive them.
"""

from __future__ import annotations

import json

import pytest

from .servers import FeralNode, Mesh, pair, wait_until

SECRET = "zanzibarquux"
"""A word nothing else in a home contains, so finding its bytes anywhere means a leak."""


def files_holding(node: FeralNode, word: str) -> list[str]:
    """Every file in the node's home whose raw bytes contain ``word``, as paths in the home."""
    needle = word.encode("utf-8")
    found = []
    for path in sorted(node.home.rglob("*")):
        if path.is_file() and needle in path.read_bytes():
            found.append(str(path.relative_to(node.home)))
    return found


def remember(node: FeralNode, text: str) -> str:
    row = json.loads(node.run("memory", "remember", text, "--json").stdout)
    return str(row["id"])


@pytest.mark.slow
def test_nuke_does_not_erase(mesh: Mesh) -> None:
    laptop, phone, tablet = mesh.add("laptop", "phone", "tablet")
    pair(laptop, phone, dial=True)
    pair(phone, laptop, dial=False)
    secret_id = remember(laptop, f"the vault code is {SECRET}")
    remember(laptop, "the vault is in the cellar")
    mesh.start(phone)
    laptop.run("sync", "now")
    for node in (laptop, phone):
        node.run("wiki", "compile")
        assert "feral.db" in files_holding(node, SECRET) or "feral.db-wal" in files_holding(
            node, SECRET
        ), f"{node.name}: the secret never arrived, so this test would prove nothing"
        assert any(p.startswith("wiki/") for p in files_holding(node, SECRET))

    laptop.run("memory", "nuke", secret_id, "--yes")
    laptop.run("sync", "now")
    for node in (laptop, phone):  # the phone is still serving: its WAL is live
        assert files_holding(node, SECRET) == [], node.name
        assert SECRET not in node.export()
    pages = json.loads(phone.run("wiki", "list", "--json").stdout)
    assert all(secret_id not in page["sources"] for page in pages)

    # A device paired after the nuke: its first catch-up must not carry the words.
    phone.stop()
    pair(tablet, phone, dial=True)
    pair(phone, tablet, dial=False)
    mesh.start(phone)
    tablet.run("sync", "now")
    assert files_holding(tablet, SECRET) == []
    assert files_holding(phone, SECRET) == []
    exports = [node.export() for node in (laptop, phone, tablet)]
    assert exports[0] == exports[1] == exports[2]
    assert secret_id in exports[2]  # the tombstone arrived, not just nothing


def prompt_text(node: FeralNode) -> str:
    return "".join((node.home / "prompt" / name).read_text() for name in ("USER.md", "MEMORY.md"))


@pytest.mark.slow
def test_a_nuke_rewrites_the_prompt_files_here_and_on_a_peer(mesh: Mesh) -> None:
    """Issue 24: ``HOME/prompt/MEMORY.md`` kept a nuked fact's words, here and on peers."""
    laptop, phone = mesh.add("laptop", "phone")
    pair(laptop, phone, dial=True)
    pair(phone, laptop, dial=False)
    triple = ("--subject", "user", "--predicate", "doctor", "--object", f"Dr. {SECRET.title()}")
    row = json.loads(laptop.run("memory", "remember", *triple, "--json").stdout)
    laptop.run(
        "memory", "remember", "--subject", "user", "--predicate", "dentist", "--object", "Dr. Silva"
    )
    mesh.start(phone)
    laptop.run("sync", "now")
    for node in (laptop, phone):
        node.run("memory", "prompt")
        assert SECRET.title() in prompt_text(node), f"{node.name}: not shown, nothing to prove"

    laptop.run("memory", "nuke", str(row["id"]), "--yes")
    laptop.run("sync", "now")
    assert "Dr. Silva" in prompt_text(laptop) and SECRET.title() not in prompt_text(laptop)
    # The phone rewrites its files when it applies the tombstone, in its serve process.
    assert wait_until(lambda: SECRET.title() not in prompt_text(phone), timeout=30), prompt_text(
        phone
    )
    assert "Dr. Silva" in prompt_text(phone)
    assert files_holding(phone, SECRET) == files_holding(laptop, SECRET) == []
