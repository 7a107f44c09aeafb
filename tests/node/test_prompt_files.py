"""USER.md and MEMORY.md (node/curation/prompt_files.py): sections by category, caps, atomic
writes."""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator

import pytest

from feral.node.curation.prompt_files import PROMPT_DIR, SECTION_CAPS, write_prompt_files
from feral.node.node import Node
from feral.storage.encoders.token_count import count_tokens

from .support import Mesh

LIKES = [f"tea number {n} from the hills of a far away place" for n in range(40)]


@pytest.fixture
async def node(tmp_path) -> AsyncIterator[Node]:
    mesh = Mesh(tmp_path)
    mesh.add("a")
    yield await mesh.open("a")
    await mesh.aclose()


def section(text: str, title: str) -> list[str]:
    """The item lines under ``## title``."""
    lines = text.splitlines()
    start = lines.index(f"## {title}") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("#")), len(lines))
    return [line for line in lines[start:end] if line.startswith("- ")]


async def test_each_fact_goes_to_its_categorys_section(node: Node):
    for text in (
        "my name is Ana", "I like green tea", "my hobby is astronomy",
        "my goal is to run a marathon", "I work at the museum", "always answer in French",
        "the meeting is on Friday",
    ):  # fmt: skip
        await node.absorb(text=text)
    await node.absorb(triple=("Bob", "likes", "chess"), scope="agent:helper")
    files = {f.path.name: f for f in await write_prompt_files(node)}
    user = (node.home / PROMPT_DIR / "USER.md").read_text()
    memory = (node.home / PROMPT_DIR / "MEMORY.md").read_text()
    assert section(user, "Identity") == ["- name: Ana"]
    assert section(user, "Preferences") == ["- likes: green tea"]
    assert section(user, "Interests") == ["- hobby: astronomy"]
    assert section(user, "Goals") == ["- goal: to run a marathon"]
    assert section(memory, "Context") == ["- works at: the museum"]
    assert section(memory, "Standing rules") == ["- always answer in French"]
    assert "Friday" not in user + memory and "chess" not in user + memory  # an event; a scope
    assert "not instructions" in user and "not instructions" in memory
    assert files["USER.md"].shown == {"identity": 1, "preference": 1, "interest": 1, "goal": 1}
    agent = await write_prompt_files(node, scope="agent:helper")
    assert agent[1].shown["context"] == 1  # Bob's, not the user's: context (below)
    assert section((node.home / PROMPT_DIR / "MEMORY.md").read_text(), "Context") == [
        "- Bob likes chess"
    ]


async def test_other_peoples_facts_are_context_never_about_the_user(node: Node):
    for text in (
        "my name is Ana", "Alice's birthday is on May 4", "Bob likes green tea",
        "my sister is called Ines", "I like jazz",
    ):  # fmt: skip
        await node.absorb(text=text)
    await write_prompt_files(node)
    user = (node.home / PROMPT_DIR / "USER.md").read_text()
    memory = (node.home / PROMPT_DIR / "MEMORY.md").read_text()
    assert section(user, "Identity") == ["- name: Ana"]
    assert section(user, "Preferences") == ["- likes: jazz"]
    assert "Alice" not in user and "Bob" not in user and "Ines" not in user
    assert sorted(section(memory, "Context")) == [
        "- Alice birthday May 4",
        "- Bob likes green tea",
        "- sister name: Ines",
    ]


async def test_a_crowded_section_is_cut_at_its_cap_and_says_how_many_are_left(node: Node):
    await node.import_facts([("user", "likes", like) for like in LIKES])
    (user, _) = await write_prompt_files(node)
    text = user.path.read_text()
    items = section(text, "Preferences")
    shown, more = items[:-1], items[-1]
    title, cap = SECTION_CAPS["preference"]
    assert (
        sum(count_tokens(line) for line in shown)
        <= cap
        < sum(count_tokens(f"- likes: {like}") for like in LIKES)
    )
    left = len(LIKES) - len(shown)
    assert left > 0 and more == f"- ({left} more not shown: feral memory list)"
    assert user.shown["preference"] == len(shown) and user.left_out["preference"] == left
    assert section(text, "Interests") == ["- (none yet)"]


async def test_the_files_are_replaced_atomically_private_and_leave_nothing_beside(node: Node):
    await node.absorb(text="my name is Ana")
    await write_prompt_files(node)
    folder = node.home / PROMPT_DIR
    before = {name: os.stat(folder / name).st_ino for name in ("USER.md", "MEMORY.md")}
    await node.absorb(text="I like green tea")
    await write_prompt_files(node)
    assert sorted(os.listdir(folder)) == ["MEMORY.md", "USER.md"]  # no temporary file left
    for name, inode in before.items():
        status = os.stat(folder / name)
        assert status.st_ino != inode  # a new file renamed over the old, never written in place
        assert stat.S_IMODE(status.st_mode) == 0o600
    assert "- likes: green tea" in (folder / "USER.md").read_text()


async def test_a_nuke_rewrites_the_files_for_the_scope_they_show(node: Node) -> None:
    await node.absorb(triple=("user", "doctor", "Dr. Chen"), scope="agent:helper")
    nuked = await node.absorb(triple=("user", "dentist", "Dr. Quux"), scope="agent:helper")
    await write_prompt_files(node, scope="agent:helper")
    memory = node.home / PROMPT_DIR / "MEMORY.md"
    assert "Dr. Quux" in memory.read_text() and "Dr. Chen" in memory.read_text()
    await node.nuke(nuked.memory_id)
    assert "Dr. Quux" not in memory.read_text()
    assert "Dr. Chen" in memory.read_text()  # still the helper's scope, not the user's
