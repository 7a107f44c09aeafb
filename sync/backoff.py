"""Reconnect delays: exponential backoff with jitter, as a pure generator (randomness injected).

The websockets library retries failed connection attempts by itself, but a link that connects
and is then refused (not paired, clock skew) or dropped must also wait before trying again, or
two nodes would hammer each other. The node draws its delays from here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

__all__ = ["reconnect_delays"]


def reconnect_delays(
    random: Callable[[], float],
    *,
    initial: float = 0.5,
    factor: float = 2.0,
    maximum: float = 60.0,
) -> Iterator[float]:
    """Yield ever longer delays in seconds, each jittered to between half and all of its step.

    Jitter spreads the retries of many devices that lost the same server at the same moment.
    """
    step = initial
    while True:
        yield step * (0.5 + random() / 2)
        step = min(maximum, step * factor)
