"""The wiki shows a memory's open conflicts on its page (node/curation/wiki.py)."""

from __future__ import annotations

from feral.node.curation.wiki import RACES_HEADING, build_pages

FACT = {
    "id": "f1", "subject": "user", "predicate": "likes", "object": "tea", "confidence": 1.0,
    "source_episode": None, "created_at": 1, "archived": False,
}  # fmt: skip
RACE = {
    "id": "c1", "table": "memory_meta", "row_id": "f1", "prior": "",
    "versions": ["5:aaaa", "6:bbbb"], "live": "6:bbbb", "detected_at": 1, "resolved": False,
    "kept": "", "resolved_at": 0,
    "values": [{"id": "f1", "importance": 3.0}, {"id": "f1", "importance": 5.0}],
}  # fmt: skip


def test_a_conflict_of_a_fact_on_a_page_is_listed_with_both_values_and_the_way_out():
    (page,) = build_pages([FACT], [], conflicts=[RACE])
    assert RACES_HEADING in page.body and page.needs_review
    assert "`5:aaaa`: importance = 3.0" in page.body
    assert "`6:bbbb` (live): importance = 5.0" in page.body
    assert "feral memory resolve c1 --keep VERSION" in page.body


def test_a_page_without_conflicts_is_unchanged():
    elsewhere = [{"id": "x", "importance": 3.0}, {"id": "x", "importance": 5.0}]
    other = {**RACE, "row_id": "x", "values": elsewhere}
    assert build_pages([FACT], []) == build_pages([FACT], [], conflicts=[other])
