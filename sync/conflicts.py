"""Concurrent writes of one row, told apart from later ones: the pure rule (docs/REPLICATION.md §4).

Every write records the version of the row it replaced at its origin (``Delta.prior``). Two
writes of one row **conflict** when they replaced the same version (or both created the row):
each writer held that version as the row's newest, so neither had seen the other's write. A
later edit replaced a version at least as new as the one it follows, so it never shares that
version's prior, and no sequential history ever forks. Whatever order the writes arrive in, and
whichever device relayed them, a node that holds both finds the same pair: the rule reads only
what every copy of the two log entries carries.

Pure: no storage, no clock. storage/absorb/conflicts.py applies it to the log.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations

from .delta import UNKNOWN_PRIOR, Version
from .errors import NotFoundError
from .schema import EPISODES, FACTS, MEMORY_META, Value
from .types import NodeId, RowId

__all__ = [
    "CREATIONS_RACE",
    "REPORTED_TABLES",
    "Fork",
    "LoggedWrite",
    "branch_tips",
    "conflict_id",
    "forks",
    "parse_version",
    "version_text",
]

REPORTED_TABLES = frozenset({FACTS.name, EPISODES.name, MEMORY_META.name})
"""The user's memories and what describes them. The execution log is insert-only, and edges
and entities have ids derived from their content: a race there writes the same thing twice."""

CREATIONS_RACE = frozenset({EPISODES.name, MEMORY_META.name})
"""Where two first writes of a row are a conflict. A fact's id is derived from its normalised
triple, so two devices that each first remember a fact state the same thing (in their own
spelling, at their own time): that is one memory, not a choice to make."""


@dataclass(frozen=True)
class LoggedWrite:
    """One log entry of a row, as the rule sees it.

    Attributes:
        version: the write's own ``(hlc, origin)``.
        prior: the version it replaced at its origin (``None``: none), or ``UNKNOWN_PRIOR``.
        values: the row it wrote, or ``None`` for a tombstone or an entry a nuke erased.
    """

    version: Version
    prior: Version | None
    values: tuple[Value, ...] | None


@dataclass(frozen=True)
class Fork:
    """Two writes that replaced the same version: ``a`` is the older, ``b`` the LWW-greater."""

    prior: Version | None
    a: LoggedWrite
    b: LoggedWrite


def forks(writes: Iterable[LoggedWrite], *, creations: bool = True) -> list[Fork]:
    """Every pair of one row's writes that replaced the same version, in version order.

    Not reported: an entry whose prior is unknown (written before protocol 3), a tombstone or
    an erased entry (a nuke must win without leaving its row's words in a record), two writes
    that wrote the same row (nothing to choose between), and two first writes of the row
    unless ``creations`` (see :data:`CREATIONS_RACE`).
    """
    siblings: dict[Version | None, list[LoggedWrite]] = defaultdict(list)
    for write in writes:
        if write.prior != UNKNOWN_PRIOR and write.values is not None:
            if creations or write.prior is not None:
                siblings[write.prior].append(write)
    found = []
    for prior, group in siblings.items():
        unique = sorted({w.version: w for w in group}.values(), key=lambda w: w.version)
        for a, b in combinations(unique, 2):
            if a.values != b.values:
                found.append(Fork(prior, a, b))
    return sorted(found, key=lambda f: (f.a.version, f.b.version))


def branch_tips(writes: Iterable[LoggedWrite], fork: Fork) -> list[LoggedWrite]:
    """The values a fork leaves to choose between: on each side, the writes that continue it
    and that no write of the row replaced (its final offline edit, not only its first), side
    ``a``'s then side ``b``'s, each in version order, every version once.

    A side nothing replaced is its own tip. A tombstone or an erased entry is no value to
    keep, and a write whose prior is unknown continues nothing: neither is listed, and a side
    whose every continuation is such an entry is shown by its own first write.
    """
    children: dict[Version, list[LoggedWrite]] = defaultdict(list)
    for write in {w.version: w for w in writes}.values():
        if write.prior is not None and write.prior != UNKNOWN_PRIOR:
            children[write.prior].append(write)
    tips: dict[Version, LoggedWrite] = {}
    for side in (fork.a, fork.b):
        found = sorted(_leaves(side, children), key=lambda w: w.version)
        for write in found or [side]:
            tips.setdefault(write.version, write)
    return list(tips.values())


def _leaves(side: LoggedWrite, children: dict[Version, list[LoggedWrite]]) -> list[LoggedWrite]:
    """The writes below ``side`` (itself included) that no write replaced, with a payload."""
    leaves, frontier, seen = [], [side], {side.version}
    while frontier:
        write = frontier.pop()
        below = [c for c in children.get(write.version, []) if c.version not in seen]
        seen.update(c.version for c in below)
        frontier += below
        if not children.get(write.version) and write.values is not None:
            leaves.append(write)
    return leaves


def conflict_id(table: str, row_id: str, a: Version, b: Version) -> RowId:
    """The id of the conflict between versions ``a`` and ``b`` of one row, the same on every
    device that finds it (the pair in either order), so they all write one row."""
    first, second = sorted((a, b))
    key = "\x1f".join((table, row_id, version_text(first), version_text(second)))
    return RowId("c" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:31])


def version_text(version: Version | None) -> str:
    """A version as users type it: ``HLC:ORIGIN`` (empty for none)."""
    return "" if version is None else f"{version.hlc}:{version.origin}"


def parse_version(text: str) -> Version:
    """The version ``text`` names (``HLC:ORIGIN``, as :func:`version_text` writes it).

    Raises:
        NotFoundError: anything else (exit 1, 404), in words a user can act on.
    """
    hlc, sep, origin = text.strip().partition(":")
    if not sep or not hlc.isdigit() or not origin:
        raise NotFoundError(f"not a version: {text[:80]!r} (expected HLC:ORIGIN, as listed)")
    return Version(int(hlc), NodeId(origin))
