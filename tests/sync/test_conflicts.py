"""The fork rule (sync/conflicts.py) against a model of devices that write one row and sync.

Each simulated device knows a set of the row's versions; a write replaces the newest it knows
(last-write-wins), stamped above it, as ``commit_local`` does; a sync gives each side the
other's knowledge (a device that holds a version holds what it replaced: each origin's log is
a gap-free prefix, and a write's prior was held by its writer). The ground truth of "neither
writer had seen the other's version" is what the writers knew, recorded at each write.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings, strategies as st

from feral.sync.conflicts import (
    LoggedWrite,
    branch_tips,
    conflict_id,
    forks,
    parse_version,
    version_text,
)
from feral.sync.delta import UNKNOWN_PRIOR, Version
from feral.sync.errors import NotFoundError
from feral.sync.types import NodeId

NODES = [NodeId(c * 32) for c in "abcd"]


@dataclass
class History:
    """Every write made, what each writer knew when it wrote, and what each device knows."""

    writes: dict[Version, LoggedWrite] = field(default_factory=dict)
    seen: dict[Version, frozenset[Version]] = field(default_factory=dict)
    known: list[set[Version]] = field(default_factory=lambda: [set() for _ in NODES])
    clock: int = 0

    def write(self, node: int) -> None:
        knows = self.known[node]
        prior = max(knows) if knows else None
        self.clock += 1
        version = Version(max(self.clock, (prior.hlc + 1) if prior else 0), NODES[node])
        self.clock = version.hlc
        self.writes[version] = LoggedWrite(version, prior, (f"value {version.hlc}",))
        self.seen[version] = frozenset(knows)
        knows.add(version)

    def sync(self, x: int, y: int) -> None:
        union = self.known[x] | self.known[y]
        self.known[x], self.known[y] = set(union), set(union)

    def ancestry(self, version: Version) -> list[Version]:
        """The version, what it replaced, what that replaced, ..."""
        chain: list[Version] = []
        current: Version | None = version
        while current is not None:
            chain.append(current)
            current = self.writes[current].prior
        return chain


steps = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.integers(0, 3), st.just(0)),
        st.tuples(st.just("sync"), st.integers(0, 3), st.integers(0, 3)),
    ),
    max_size=30,
)


def run(plan: list[tuple[str, int, int]]) -> History:
    history = History()
    for action, x, y in plan:
        if action == "write":
            history.write(x)
        else:
            history.sync(x, y)
    return history


def concurrent(history: History, x: Version, y: Version) -> bool:
    return x not in history.seen[y] and y not in history.seen[x]


@settings(max_examples=300)
@given(steps)
def test_a_reported_pair_was_never_a_sequential_edit(plan: list[tuple[str, int, int]]) -> None:
    history = run(plan)
    for fork in forks(history.writes.values()):
        assert concurrent(history, fork.a.version, fork.b.version)
        assert fork.a.version < fork.b.version


@settings(max_examples=300)
@given(steps)
def test_every_concurrent_pair_meets_at_a_reported_fork(plan: list[tuple[str, int, int]]) -> None:
    """Two writes neither of whose writers saw the other's are reported where their histories
    part: the first write on each side after the version both histories share."""
    history = run(plan)
    reported = {(f.a.version, f.b.version) for f in forks(history.writes.values())}
    versions = sorted(history.writes)
    for i, x in enumerate(versions):
        for y in versions[i + 1 :]:
            if not concurrent(history, x, y):
                continue
            xs, ys = history.ancestry(x), history.ancestry(y)
            shared = set(xs) & set(ys)
            x_side = [v for v in xs if v not in shared][-1]
            y_side = [v for v in ys if v not in shared][-1]
            assert tuple(sorted((x_side, y_side))) in reported


@settings(max_examples=200)
@given(steps, st.randoms(use_true_random=False), st.floats(0, 1))
def test_any_order_and_any_part_of_the_log_finds_a_subset_of_the_same_forks(
    plan: list[tuple[str, int, int]], shuffle: random.Random, share: float
) -> None:
    """What a device finds depends only on which entries it holds, never on their order, and
    holding more never withdraws a fork: so every device that holds everything agrees."""
    history = run(plan)
    writes = list(history.writes.values())
    whole = forks(writes)
    shuffle.shuffle(writes)
    assert forks(writes) == whole
    part = writes[: int(len(writes) * share)]
    assert set(map(repr, forks(part))) <= set(map(repr, whole))


def test_tombstones_unknown_priors_and_equal_rows_are_not_reported() -> None:
    base = Version(1, NODES[0])
    x, y, z = (Version(2, NODES[i]) for i in (1, 2, 3))
    assert forks([LoggedWrite(x, base, None), LoggedWrite(y, base, ("b",))]) == []
    assert (
        forks([LoggedWrite(x, UNKNOWN_PRIOR, ("a",)), LoggedWrite(y, UNKNOWN_PRIOR, ("b",))]) == []
    )
    assert forks([LoggedWrite(x, base, ("same",)), LoggedWrite(z, base, ("same",))]) == []
    assert len(forks([LoggedWrite(x, None, ("a",)), LoggedWrite(y, None, ("b",))])) == 1
    creations = [LoggedWrite(x, None, ("a",)), LoggedWrite(y, None, ("b",))]
    assert forks(creations, creations=False) == []


def test_the_conflict_id_names_the_pair_in_either_order() -> None:
    a, b = Version(5, NODES[0]), Version(7, NODES[1])
    assert conflict_id("facts", "f1", a, b) == conflict_id("facts", "f1", b, a)
    assert conflict_id("facts", "f1", a, b) != conflict_id("facts", "f2", a, b)
    assert len(conflict_id("facts", "f1", a, b)) == 32


def test_versions_are_typed_as_listed() -> None:
    version = Version(123, NODES[2])
    assert parse_version(version_text(version)) == version
    for text in ("", "12", "x:abc", ":abc", "12:"):
        with pytest.raises(NotFoundError):
            parse_version(text)


def test_a_fork_lists_each_sides_final_offline_edit_not_only_its_first() -> None:
    base = Version(1, NODES[0])
    first, final = Version(2, NODES[0]), Version(3, NODES[0])
    other = Version(2, NODES[1])
    writes = [
        LoggedWrite(base, None, ("0",)),
        LoggedWrite(first, base, ("3",)),
        LoggedWrite(final, first, ("4",)),
        LoggedWrite(other, base, ("5",)),
    ]
    (fork,) = forks(writes)
    assert [w.version for w in branch_tips(writes, fork)] == [final, other]
    tombstoned = [*writes[:3], LoggedWrite(Version(4, NODES[0]), final, None), writes[3]]
    (fork,) = forks(tombstoned)
    assert [w.version for w in branch_tips(tombstoned, fork)] == [first, other]


@settings(max_examples=300)
@given(steps)
def test_the_tips_of_a_fork_are_every_unreplaced_write_below_its_two_sides(
    plan: list[tuple[str, int, int]],
) -> None:
    history = run(plan)
    writes = list(history.writes.values())
    replaced = {w.prior for w in writes}
    for fork in forks(writes):
        below = {
            v
            for v in history.writes
            if {fork.a.version, fork.b.version} & set(history.ancestry(v)) and v not in replaced
        }
        assert {w.version for w in branch_tips(writes, fork)} == below
