"""Hybrid logical clock (Kulkarni, Demirbas et al., "Logical Physical Clocks", 2014).

A reading is ``(wall_ms, counter)``; the node id breaks ties, so :class:`Timestamp` orders every
write in the mesh totally. It is stored as one integer, ``wall_ms << 16 | counter`` (the packed
form), with the node id in a column of its own.

Working on the packed integer makes the algorithm short: the next local stamp is
``max(physical << 16, last + 1)``. When the 16-bit counter is full, ``last + 1`` carries into the
millisecond field, which is exactly "borrow the next millisecond": a clock never wraps and never
repeats a stamp, however many writes share one physical millisecond.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .errors import ClockError, ClockSkewError
from .types import NodeId, PackedHLC

__all__ = [
    "COUNTER_BITS",
    "COUNTER_MASK",
    "DEFAULT_MAX_DRIFT_MS",
    "HybridClock",
    "MAX_PACKED",
    "Timestamp",
    "check_skew",
    "pack",
    "unpack",
]

COUNTER_BITS = 16
COUNTER_MASK = (1 << COUNTER_BITS) - 1
MAX_PACKED = (1 << 63) - 1
DEFAULT_MAX_DRIFT_MS = 86_400_000
"""How far the logical wall time may run ahead of the physical clock before local stamping stops.

A wall clock set back (by hand, or by NTP after running fast) leaves the persisted high-water mark
ahead of it, and the clock must carry on above that mark: a day covers any ordinary correction.
A larger gap means the system clock or the database is badly wrong, and is reported, not hidden."""


def pack(wall_ms: int, counter: int) -> PackedHLC:
    """Pack a reading into one integer that sorts like the reading."""
    if not 0 <= counter <= COUNTER_MASK:
        raise ClockError(f"HLC counter {counter} is outside 0..{COUNTER_MASK}")
    if wall_ms < 0 or (wall_ms << COUNTER_BITS) | counter > MAX_PACKED:
        raise ClockError(f"HLC wall time {wall_ms} is out of range")
    return PackedHLC((wall_ms << COUNTER_BITS) | counter)


def unpack(packed: int) -> tuple[int, int]:
    """Split a packed reading into ``(wall_ms, counter)``."""
    return packed >> COUNTER_BITS, packed & COUNTER_MASK


@dataclass(frozen=True, order=True)
class Timestamp:
    """A stamp with its writer: field order is comparison order (HLC first, then node id)."""

    wall_ms: int
    counter: int
    node_id: NodeId

    @classmethod
    def from_packed(cls, packed: int, node_id: NodeId) -> Timestamp:
        wall_ms, counter = unpack(packed)
        return cls(wall_ms, counter, node_id)

    @property
    def packed(self) -> PackedHLC:
        return pack(self.wall_ms, self.counter)


def check_skew(remote: int, now_ms: int, window_ms: int, peer: str | None = None) -> None:
    """Refuse a remote packed stamp more than ``window_ms`` ahead of ``now_ms``.

    This is a pure check, run before a stamp may touch any clock or cursor (DESIGN §4).

    Raises:
        ClockSkewError: naming the offset, the window and the peer.
    """
    offset = (remote >> COUNTER_BITS) - now_ms
    if offset > window_ms:
        raise ClockSkewError(offset, window_ms, peer)


class HybridClock:
    """One node's clock. Time is injected so tests and simulations control it.

    Args:
        node_id: the owner, recorded in every :class:`Timestamp`.
        now_ms: the physical clock, in milliseconds since the epoch.
        last: the high-water mark to resume from (persisted by the caller).
        max_drift_ms: how far logical time may run ahead of ``now_ms`` for local stamps.
    """

    def __init__(
        self,
        node_id: NodeId,
        now_ms: Callable[[], int],
        last: int = 0,
        max_drift_ms: int = DEFAULT_MAX_DRIFT_MS,
    ) -> None:
        self.node_id = node_id
        self.now_ms = now_ms
        self.last: PackedHLC = PackedHLC(last)
        self.max_drift_ms = max_drift_ms

    def tick(self, floor: int = 0) -> PackedHLC:
        """Stamp a local event: strictly above every stamp seen so far and above ``floor``.

        ``floor`` is the high-water mark read from storage inside the write transaction, which
        is how two processes sharing one home keep their stamps strictly ordered.

        Raises:
            ClockError: when logical time would run more than ``max_drift_ms`` ahead.
        """
        physical = self.now_ms()
        candidate = max(physical << COUNTER_BITS, self.last + 1, floor + 1)
        wall_ms = candidate >> COUNTER_BITS
        if wall_ms - physical > self.max_drift_ms:
            raise ClockError(
                f"the logical clock is {wall_ms - physical} ms ahead of "
                f"wall time (limit {self.max_drift_ms} ms); is the system clock set back?"
            )
        # What ``pack(*unpack(candidate))`` checks, without the round trip: every write stamps.
        if not 0 <= candidate <= MAX_PACKED:
            raise ClockError(f"HLC wall time {wall_ms} is out of range")
        self.last = PackedHLC(candidate)
        return self.last

    def observe(self, remote: int, window_ms: int, peer: str | None = None) -> PackedHLC:
        """Merge a received stamp into the clock, after the skew check.

        Raises:
            ClockSkewError: the stamp is beyond the window; the clock is left unchanged.
        """
        check_skew(remote, self.now_ms(), window_ms, peer)
        if remote > self.last:
            self.last = PackedHLC(remote)
        return self.last

    def timestamp(self, packed: int) -> Timestamp:
        """This node's stamp for a packed reading."""
        return Timestamp.from_packed(packed, self.node_id)
