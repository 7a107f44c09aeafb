"""Whether this node is in sync with a peer, and what is known to be pending (issue 23).

``feral sync status`` used to call a peer in sync whenever what the peer last said it held
matched what this node holds now, however old that word was: a laptop that only dials out said
"in sync" while the server held new entries for it, a server said so of an offline phone
holding unsent edits, and two empty devices that had exchanged said "no" (empty vectors never
counted). The rule now: in sync means equal holdings (vectors, entry counts and row digests)
at the last exchange, with nothing announced and not received, **and** that exchange younger
than the anti-entropy period plus a grace for the round it starts. A link that stays up renews
its exchange every period (each side's anti-entropy vector is answered by a CaughtUp), so a
live link stays in sync; otherwise the state says since when nothing is known.

The states, in the order they are judged (docs/OPERATIONS.md, "What sync status says", has
the table):

- ``diverged``: equal holdings, different rows at the last exchange.
- ``catching_up``: a link is up and the stream the peer announced has not all arrived.
- ``unreachable``: the last attempt to reach the peer failed and no link is up.
- ``never_exchanged``: no exchange has completed with the peer yet.
- ``unknown``: the last exchange is older than the window: since then nothing is known.
- ``in_sync``: equal at a fresh exchange, nothing announced left to receive.
- ``not_in_sync``: a fresh exchange, and entries to send or to receive.
"""

from __future__ import annotations

from dataclasses import dataclass

from feral.node.home.env_seconds import env_seconds

__all__ = ["SYNC_STATES", "PeerFacts", "fresh", "in_sync_window_ms", "judge", "to_receive"]

SYNC_STATES = (
    "in_sync", "not_in_sync", "catching_up", "diverged", "unknown", "unreachable",
    "never_exchanged",
)  # fmt: skip

# The anti-entropy period as node/serve/service.py reads it (the same variable, default and bound;
# tests/node/test_sync_state.py holds the two together). Read here, not imported from there:
# the server's module pulls in uvicorn, which ``sync status`` never needs.
ANTI_ENTROPY_ENV = "FERAL_ANTI_ENTROPY_S"
ANTI_ENTROPY_S = 60.0
ANTI_ENTROPY_MAX_S = 86_400.0
GRACE_MS = 5_000
"""How much older than one period the last exchange may be on a live link: the period's
vector is sent on the server's next watch, and its CaughtUp comes back a round trip later."""


def in_sync_window_ms() -> int:
    """How young the last exchange must be for a peer to be in sync: the anti-entropy period
    (``$FERAL_ANTI_ENTROPY_S``, default 60 s) plus :data:`GRACE_MS`.

    Raises:
        ConfigError: the variable is not a positive number of seconds.
    """
    period = env_seconds(
        ANTI_ENTROPY_ENV, ANTI_ENTROPY_S, least=0, most=ANTI_ENTROPY_MAX_S, zero=False
    )
    return int(period * 1000) + GRACE_MS


@dataclass(frozen=True)
class PeerFacts:
    """What this node recorded about one peer, as the judgement needs it."""

    last_sync_at: int | None
    """When the last exchange completed (the peer's last CaughtUp), if ever."""
    equal: bool
    """What the peer last said it holds equals what this node holds now (and no alarm)."""
    diverged: bool
    link_up: bool
    unreachable: bool
    """The last attempt failed to reach the peer, and none has succeeded since."""
    announced_left: int
    """Entries the peer announced it would stream that have not arrived."""


def judge(facts: PeerFacts, now_ms: int, window_ms: int) -> str:
    """The peer's state, one of :data:`SYNC_STATES` (this module's docstring gives the order)."""
    if facts.diverged:
        return "diverged"
    if facts.link_up and facts.announced_left:
        return "catching_up"
    if facts.unreachable and not facts.link_up:
        return "unreachable"
    if facts.last_sync_at is None:
        return "never_exchanged"
    if not fresh(facts, now_ms, window_ms):
        return "unknown"
    return "in_sync" if facts.equal and not facts.announced_left else "not_in_sync"


def fresh(facts: PeerFacts, now_ms: int, window_ms: int) -> bool:
    """Whether the last exchange is younger than the window."""
    return facts.last_sync_at is not None and now_ms - facts.last_sync_at < window_ms


def to_receive(facts: PeerFacts, now_ms: int, window_ms: int) -> int | None:
    """What is known to be on its way from the peer: what it announced and has not arrived,
    else 0 after a fresh exchange, else unknown (``None``: its writes since cannot be seen)."""
    if facts.announced_left:
        return facts.announced_left
    return 0 if fresh(facts, now_ms, window_ms) else None
