"""node/links/sync_state.py: when a peer is in sync, and what is known to be pending (issue 23).

The real-process rows of the truth table are in tests/cli/test_status_truth_table.py; these
check the judgement's order and its window without an event loop.
"""

from __future__ import annotations

import dataclasses

import pytest

from feral.node.links.sync_state import GRACE_MS, PeerFacts, in_sync_window_ms, judge, to_receive
from feral.node.serve.service import anti_entropy_interval
from feral.sync.errors import ConfigError

NOW = 1_800_000_000_000
WINDOW = 65_000
EQUAL_AND_FRESH = PeerFacts(
    last_sync_at=NOW - 1_000, equal=True, diverged=False, link_up=False, unreachable=False,
    announced_left=0,
)  # fmt: skip


def with_(**changes: object) -> PeerFacts:
    return dataclasses.replace(EQUAL_AND_FRESH, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize("seconds", [None, "1", "0.5", "90"])
def test_the_window_is_the_servers_anti_entropy_period_plus_the_grace(
    monkeypatch: pytest.MonkeyPatch, seconds: str | None
) -> None:
    if seconds is None:
        monkeypatch.delenv("FERAL_ANTI_ENTROPY_S", raising=False)
    else:
        monkeypatch.setenv("FERAL_ANTI_ENTROPY_S", seconds)
    assert in_sync_window_ms() == int(anti_entropy_interval() * 1000) + GRACE_MS


def test_a_bad_period_is_refused_as_the_server_refuses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FERAL_ANTI_ENTROPY_S", "0")
    with pytest.raises(ConfigError, match="FERAL_ANTI_ENTROPY_S"):
        in_sync_window_ms()


def test_equal_at_an_exchange_younger_than_the_window_is_in_sync_and_older_is_unknown() -> None:
    assert judge(EQUAL_AND_FRESH, NOW, WINDOW) == "in_sync"
    assert judge(with_(last_sync_at=NOW - WINDOW + 1), NOW, WINDOW) == "in_sync"
    assert judge(with_(last_sync_at=NOW - WINDOW), NOW, WINDOW) == "unknown"
    assert to_receive(with_(last_sync_at=NOW - WINDOW), NOW, WINDOW) is None
    assert to_receive(EQUAL_AND_FRESH, NOW, WINDOW) == 0


def test_what_was_announced_and_has_not_arrived_is_pending_even_when_stale() -> None:
    stale = with_(last_sync_at=NOW - WINDOW, announced_left=5)
    assert judge(stale, NOW, WINDOW) == "unknown" and to_receive(stale, NOW, WINDOW) == 5
    assert judge(with_(announced_left=5), NOW, WINDOW) == "not_in_sync"
    assert judge(with_(announced_left=5, link_up=True), NOW, WINDOW) == "catching_up"


def test_divergence_comes_first_then_a_failed_reach_then_a_missing_exchange() -> None:
    assert judge(with_(diverged=True, unreachable=True), NOW, WINDOW) == "diverged"
    assert judge(with_(unreachable=True), NOW, WINDOW) == "unreachable"
    assert judge(with_(unreachable=True, link_up=True), NOW, WINDOW) == "in_sync"
    never = with_(last_sync_at=None, equal=False)
    assert judge(never, NOW, WINDOW) == "never_exchanged"
    assert judge(dataclasses.replace(never, unreachable=True), NOW, WINDOW) == "unreachable"
    assert judge(with_(equal=False), NOW, WINDOW) == "not_in_sync"
