"""The facts a line without a vector is compared with: every row that could be its
near-duplicate, read at a bounded cost however many facts share its common words."""

from __future__ import annotations

from feral.storage.absorb.word_neighbours import COUNT_AT_MOST, READ_AT_MOST, word_neighbours
from feral.storage.memory.memories import import_facts, set_archived
from feral.storage.store import run_write

from .support import Replica

A = "a" * 32

NEAR = "the tomatoes on the south bed need staking before the storm"


def _store(replica: Replica, texts: list[str]) -> None:
    triples = [("user", "note", text) for text in texts]
    run_write(replica.conn, import_facts, A, replica.clock.tick, triples, now_ms=replica.time())


def _objects(replica: Replica, text: str) -> list[str]:
    return [str(row["object"]) for row in word_neighbours(replica.conn, text, "own", 8)]


def test_a_near_duplicate_is_found_among_many_rows_sharing_its_common_words(make_replica):
    replica = make_replica("a", A)
    crowd = [f"tomatoes need staking on bed {i} before the storm" for i in range(3 * READ_AT_MOST)]
    _store(replica, [NEAR, *crowd])  # the near-duplicate is the oldest of them all
    assert _objects(replica, "user note really the tomatoes on the south bed need staking "
                    "before the storm")[0] == NEAR  # fmt: skip


def test_a_line_of_common_words_only_still_finds_its_near_duplicate(make_replica):
    replica = make_replica("a", A)
    common = [f"garden shed {i % 3} tools storm" for i in range(2 * COUNT_AT_MOST)]
    _store(replica, [NEAR, *common, f"{NEAR} again"])
    found = _objects(replica, f"user note {NEAR}")
    assert NEAR in found[:2] and f"{NEAR} again" in found[:2]


def test_a_word_with_and_without_its_final_s_is_one_word(make_replica):
    replica = make_replica("a", A)
    _store(replica, ["aisle seats on the evening train"])
    assert _objects(replica, "user note aisle seat on the evening trains") == [
        "aisle seats on the evening train"
    ]


def test_archived_rows_and_the_fact_itself_are_left_out(make_replica):
    replica = make_replica("a", A)
    _store(replica, ["backups run at 2am nightly", "backups run at 2am nightly please"])
    rows = word_neighbours(replica.conn, "user note backups run at 2am nightly", "own", 8)
    old = next(row for row in rows if row["object"] == "backups run at 2am nightly please")
    run_write(replica.conn, set_archived, A, replica.clock.tick, str(old["id"]), True)
    own = next(row for row in rows if row["object"] == "backups run at 2am nightly")
    assert word_neighbours(replica.conn, "user note backups run at 2am nightly", own["id"], 8) == []
