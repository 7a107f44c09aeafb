from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from feral.node.curation.wiki import (
    WIKI_FOLDER,
    build_pages,
    list_pages,
    read_page,
    slugify,
    write_pages,
)
from feral.node.node import Node
from feral.storage.log.delta_log import changes_since
from feral.sync.errors import NotFoundError, PathRefused

from .support import ManualClock, apply_page, now_ms

_N = iter(range(10**6))


def fact(subject: str, predicate: str, obj: str, row_id: str | None = None) -> dict[str, Any]:
    return {
        "id": row_id or f"f{next(_N):04d}",
        "subject": subject,
        "predicate": predicate,
        "object": obj,
    }


def episode(summary: str, entities: Any, session: str = "s1", at: int = 1) -> dict[str, Any]:
    value = entities if isinstance(entities, str) else json.dumps(entities)
    return {
        "id": f"e{next(_N):04d}",
        "session_id": session,
        "summary": summary,
        "entities": value,
        "created_at": at,
    }


def pages_by_topic(facts: list[dict[str, Any]], episodes: list[dict[str, Any]]) -> dict[str, Any]:
    return {page.topic: page for page in build_pages(facts, episodes)}


def without_stamp(text: str) -> str:
    return re.sub(r"(?m)^last_compiled: .*$", "last_compiled: -", text)


# Building pages (pure)


def test_facts_are_grouped_by_subject_and_sorted_by_predicate_then_object():
    pages = pages_by_topic(
        [
            fact("Alice", "likes", "tea", "f2"),
            fact("Alice", "birthday", "May 4", "f1"),
            fact("user", "lives_in", "Porto", "f3"),
        ],
        [],
    )
    assert sorted(pages) == ["Alice", "user"]
    alice = pages["Alice"]
    assert alice.sources == ("f1", "f2")
    assert alice.body == (
        "# Alice\n\n## Facts\n\n- **birthday**: May 4 (`f1`)\n- **likes**: tea (`f2`)\n"
    )


def test_episodes_appear_under_each_of_their_entities():
    trip = episode("We fly to Porto with Alice.", ["Porto", "Alice"])
    pages = pages_by_topic([fact("Alice", "likes", "tea", "f1")], [trip])
    assert sorted(pages) == ["Alice", "Porto"]
    assert pages["Alice"].sources == tuple(sorted(("f1", trip["id"])))
    assert f"- We fly to Porto with Alice. (session `s1`, `{trip['id']}`)" in pages["Porto"].body


def test_episodes_without_entities_are_grouped_by_session():
    quiet = episode("nothing named here", [], session="abc")
    broken = episode("entities that are not JSON", "{oops", session="abc")
    assert list(pages_by_topic([], [quiet, broken])) == ["Session abc"]


def test_topics_ignore_case_and_show_the_most_frequent_spelling():
    pages = build_pages(
        [fact("alice", "likes", "tea"), fact("Alice", "likes", "jazz"), fact("Alice", "age", "30")],
        [episode("x", ["ALICE"])],
    )
    assert [(p.topic, len(p.sources)) for p in pages] == [("Alice", 4)]


def test_several_objects_for_one_subject_and_predicate_need_review():
    pages = pages_by_topic(
        [
            fact("user", "doctor_name", "Dr. Chen", "f1"),
            fact("user", "doctor_name", "Dr. Lee", "f2"),
            fact("user", "lives_in", "Porto", "f3"),
        ],
        [],
    )
    body = pages["user"].body
    assert pages["user"].needs_review
    review = body[body.index("## Needs review") :]
    assert review == (
        "## Needs review\n\n- **doctor_name** has 2 different values:\n"
        "  - Dr. Chen (`f1`)\n  - Dr. Lee (`f2`)\n"
    )


def test_many_valued_predicates_are_not_conflicts():
    pages = pages_by_topic(
        [
            fact("user", "note", "a"),
            fact("user", "note", "b"),
            fact("user", "likes", "tea"),
            fact("user", "likes", "jazz"),
            fact("Alice", "is", "a nurse"),
            fact("Alice", "is", "tall"),
        ],
        [],
    )
    assert not any(page.needs_review for page in pages.values())
    assert "Needs review" not in pages["user"].body


def test_pages_are_the_same_whatever_order_the_rows_come_in():
    facts = [fact("Alice", "likes", f"thing {i}") for i in range(20)]
    episodes = [episode(f"summary {i}", ["Alice", f"Topic {i % 3}"], at=i % 4) for i in range(20)]
    assert build_pages(facts, episodes) == build_pages(facts[::-1], episodes[::-1])


def test_values_are_kept_on_one_line_so_they_cannot_forge_markdown_structure():
    [page] = build_pages([fact("Eve", "note", "line\n---\n## Facts\nmore")], [])
    assert "- **note**: line --- ## Facts more (`" in page.body
    assert re.findall(r"(?m)^## .*$", page.body) == ["## Facts"]


@pytest.mark.parametrize(
    ("topic", "slug"),
    [
        ("Alice Smith", "alice-smith"),
        ("Dr. Chen", "dr-chen"),
        ("../../etc/passwd", "etc-passwd"),
        ("Café Ñandú", "cafe-nandu"),
        ("東京", ""),
        ("x" * 200, "x" * 60),
    ],
)
def test_slugs_are_ascii_letters_digits_and_dashes(topic, slug):
    assert slugify(topic) == slug


def test_colliding_empty_or_reserved_slugs_get_a_hash_of_the_topic():
    pages = build_pages(
        [
            fact("C++", "is", "a language"),
            fact("C", "is", "a language"),
            fact("東京", "is", "big"),
            fact("CON", "is", "a device name"),
            fact("Porto", "is", "nice"),
        ],
        [],
    )
    slugs = {page.topic: page.slug for page in pages}
    assert slugs["Porto"] == "porto"
    assert re.fullmatch(r"c-[0-9a-f]{8}", slugs["C"])
    assert re.fullmatch(r"c-[0-9a-f]{8}", slugs["C++"]) and slugs["C"] != slugs["C++"]
    assert re.fullmatch(r"topic-[0-9a-f]{8}", slugs["東京"])
    assert re.fullmatch(r"con-[0-9a-f]{8}", slugs["CON"])


# Files


def compile_into(home: Path, facts: list[dict[str, Any]], at: int = 0) -> list[dict[str, Any]]:
    return write_pages(home, build_pages(facts, []), at)


def test_pages_are_written_with_frontmatter_and_listed(tmp_path):
    written = compile_into(tmp_path, [fact("Alice", "age", "30", "f1")], at=86_400_000)
    assert written == [
        {"topic": "Alice", "path": "wiki/alice.md", "sources": ["f1"], "needs_review": False}
    ]
    text = (tmp_path / WIKI_FOLDER / "alice.md").read_text(encoding="utf-8")
    assert text.startswith(
        '---\ntopic: "Alice"\nsources:\n  - "f1"\n'
        "last_compiled: 1970-01-02T00:00:00Z\n---\n\n# Alice\n"
    )
    assert list_pages(tmp_path) == written


def test_a_recompile_removes_stale_pages_but_not_other_files(tmp_path):
    compile_into(tmp_path, [fact("Alice", "age", "30"), fact("Bob", "age", "40")])
    (tmp_path / WIKI_FOLDER / "my-notes.md").write_text("# mine\n", encoding="utf-8")
    compile_into(tmp_path, [fact("Alice", "age", "30")])
    assert sorted(p.name for p in (tmp_path / WIKI_FOLDER).iterdir()) == ["alice.md", "my-notes.md"]


def test_a_page_is_found_by_topic_in_any_case_or_by_its_file_name(tmp_path):
    compile_into(tmp_path, [fact("Dr. Chen", "office", "Lisbon")])
    page = read_page(tmp_path, "Dr. Chen")
    assert read_page(tmp_path, "DR.  chen") == page == read_page(tmp_path, "dr-chen")
    assert "- **office**: Lisbon" in page


def test_a_topic_that_names_a_path_is_refused(tmp_path):
    compile_into(tmp_path, [fact("Alice", "age", "30")])
    (tmp_path / "secret.md").write_text('---\ntopic: "x"\n---\n', encoding="utf-8")
    for topic in ("../secret", "../secret.md", "/etc/passwd", "..\\secret", "a/../../secret"):
        with pytest.raises(PathRefused, match="is a path, not a wiki topic"):
            read_page(tmp_path, topic)


def test_a_topic_with_a_slash_is_still_found_by_its_name(tmp_path):
    compile_into(tmp_path, [fact("TCP/IP", "is", "a protocol suite")])
    assert "# TCP/IP" in read_page(tmp_path, "tcp/ip")


def test_an_unknown_topic_is_not_found(tmp_path):
    with pytest.raises(NotFoundError, match="no wiki page for 'nobody'"):
        read_page(tmp_path, "nobody")


def test_a_symlinked_page_pointing_outside_the_wiki_is_refused(tmp_path):
    compile_into(tmp_path, [fact("Alice", "age", "30")])
    outside = tmp_path / "elsewhere.md"
    outside.write_text('---\ntopic: "Mallory"\nsources: []\n---\n', encoding="utf-8")
    (tmp_path / WIKI_FOLDER / "mallory.md").symlink_to(outside)
    with pytest.raises(PathRefused, match="outside"):
        read_page(tmp_path, "Mallory")


# Through the node, on two devices


@pytest.fixture
async def pair(tmp_path: Path) -> AsyncIterator[tuple[Node, Node]]:
    a = await Node.open(tmp_path / "a", now_ms=ManualClock(now_ms()))
    b = await Node.open(tmp_path / "b", now_ms=ManualClock(now_ms() + 5_000))
    yield a, b
    await a.close()
    await b.close()


async def exchange(a: Node, b: Node) -> None:
    """Storage-level sync: each node applies the pages the other has and it lacks."""
    for source, target in ((a, b), (b, a)):
        while pages := await source.store.read(changes_since, await target.version_vector(), 1000):
            for page in pages:
                await apply_page(target, page)


async def test_two_synced_devices_compile_identical_pages(pair):
    a, b = pair
    await a.absorb("my doctor's name is Dr. Chen")
    await a.absorb("Alice's birthday is on May 4")
    await b.absorb("my doctor's name is Dr. Lee")
    await b.absorb("Alice's birthday is on May 4")
    await b.add_episode("trip", "We fly to Porto with Alice.", ["Porto", "Alice"])
    forgotten = (await a.absorb("I like olives")).row
    await a.set_archived(forgotten["id"], True)
    await exchange(a, b)
    assert await a.export_lines() == await b.export_lines()

    index_a, index_b = await a.compile_wiki(), await b.compile_wiki()
    assert index_a == index_b
    assert [p["topic"] for p in index_a] == ["Alice", "Porto", "user"]
    for entry in index_a:
        text_a = (a.home / entry["path"]).read_text(encoding="utf-8")
        text_b = (b.home / entry["path"]).read_text(encoding="utf-8")
        assert text_a != text_b  # the clocks differ, so last_compiled does
        assert without_stamp(text_a) == without_stamp(text_b)
    user = await a.wiki_page("user")
    assert "olives" not in user
    assert "## Needs review" in user and "Dr. Chen" in user and "Dr. Lee" in user
    assert await a.wiki_topics() == index_a


async def test_compile_with_no_memories_writes_no_pages(pair):
    a, _ = pair
    assert await a.compile_wiki() == []
    assert await a.wiki_topics() == []
