"""cli/output.py: people's units in tables (durations, counts, short ids)."""

from __future__ import annotations

import io

import click

from feral.cli.output import ago, count, duration, short_id
from feral.cli.sync.sync_commands import _bar_part
from feral.sync.types import NodeId

A = NodeId("a" * 32)
B = NodeId("b" * 32)


def test_durations_are_shown_in_the_largest_readable_unit():
    assert [duration(ms) for ms in (0, 850, 1000, 42_000, 180_000, 5 * 3_600_000)] == [
        "0 ms", "850 ms", "1 s", "42 s", "3 min", "5 h",
    ]  # fmt: skip
    assert duration(2 * 86_400_000 + 5) == "2 d"
    assert duration(-5) == "0 ms"


def test_moments_are_shown_as_how_long_ago():
    assert ago(None, 10_000) == "never"
    assert ago(9_500, 10_000) == "just now"
    assert ago(10_000 - 180_000, 10_000) == "3 min ago"


def test_counts_have_separators_and_ids_are_cut_for_tables():
    assert count(12_500) == "12,500"
    assert short_id(A) == "aaaaaaaa"
    assert short_id(None) == "unknown"


def test_the_sync_bar_adds_what_each_peer_announced_and_what_arrived():
    with click.progressbar(length=0, file=io.StringIO()) as bar:
        parts: dict[NodeId, tuple[int, int]] = {}
        from_a, from_b = _bar_part(bar, parts, A), _bar_part(bar, parts, B)
        from_a(1000, 2500)
        from_b(300, 300)
        from_a(2500, 2500)
        assert (bar.pos, bar.length) == (2800, 2800)
