"""Hybrid logical clock (Kulkarni, Demirbas et al., "Logical Physical Clocks", 2014).

A reading is ``(wall_ms, counter)``; the node id breaks ties, so :class:`Timestamp` orders every
write in the mesh totally. It is stored as one integer, ``wall_ms << 16 | counter`` (the packed
form), with the node id in a column of its own.

Working on the packed integer makes the algorithm short: the next local stamp is
``max(physical << 16, last + 1, floor + 1)``. When the 16-bit counter is full, ``last + 1``
carries into the millisecond field, which is exactly "borrow the next millisecond": a clock
never wraps and never repeats a stamp, however many writes share one physical millisecond.

Unlike the paper's clock, a received stamp never lifts this one (issue 11): each device's stamps
follow its own clock, so a fast device, or a paired one stamping ahead on purpose, cannot push every
other device's stamps ahead of their clocks and get them refused further down the mesh.
Last-write-wins still sees a later edit of a row win, because a local write to a row is stamped
above the row's stored version (the ``floor`` of :meth:`HybridClock.tick`,
storage/memory/memories.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .errors import ClockError, ClockSkewError
from .types import NodeId, PackedHLC
from .units import format_ms

__all__ = [
    "COUNTER_BITS",
    "COUNTER_MASK",
    "DEFAULT_MAX_DRIFT_MS",
    "HybridClock",
    "MAX_PACKED",
    "Timestamp",
    "check_skew",
    "delta_limit_ms",
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


def delta_limit_ms(window_ms: int) -> int:
    """How far ahead of the receiver's clock a received stamp may be: twice the skew window.

    The handshake keeps two linked devices' clocks within one window; a relayed entry was
    stamped by its origin, at most one window from the relay, which is at most one window from
    us. So in a mesh whose clocks all lie within one window of a common device (a home server),
    no device's own writes are refused anywhere (docs/REPLICATION.md §7).
    """
    return 2 * window_ms


def check_skew(
    remote: int, now_ms: int, window_ms: int, peer: str | None = None, origin: str | None = None
) -> None:
    """Refuse a remote packed stamp more than :func:`delta_limit_ms` ahead of ``now_ms``.

    This is a pure check, run before a stamp may touch any row or cursor (DESIGN §4).

    Raises:
        ClockSkewError: naming the offset, the window, the origin that stamped it and the
            peer that sent it.
    """
    offset = (remote >> COUNTER_BITS) - now_ms
    if offset > delta_limit_ms(window_ms):
        raise ClockSkewError(offset, window_ms, peer, origin)


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
        """Stamp a local event: strictly above this clock's last stamp and above ``floor``.

        ``floor`` is read from storage inside the write transaction: this node's own newest
        stamp (how two processes sharing one home keep their stamps strictly ordered) and the
        stored versions of the rows being written (so the write wins over them).

        Raises:
            ClockError: when logical time would run more than ``max_drift_ms`` ahead.
        """
        physical = self.now_ms()
        candidate = max(physical << COUNTER_BITS, self.last + 1, floor + 1)
        wall_ms = candidate >> COUNTER_BITS
        if wall_ms - physical > self.max_drift_ms:
            raise ClockError(
                f"this device's stamps are {format_ms(wall_ms - physical)} ahead of its clock "
                f"(limit {format_ms(self.max_drift_ms)}): they were issued while the clock ran "
                "ahead; bring them back to the clock with: feral sync clock-reset"
            )
        # What ``pack(*unpack(candidate))`` checks, without the round trip: every write stamps.
        if not 0 <= candidate <= MAX_PACKED:
            raise ClockError(f"HLC wall time {wall_ms} is out of range")
        self.last = PackedHLC(candidate)
        return self.last

    def timestamp(self, packed: int) -> Timestamp:
        """This node's stamp for a packed reading."""
        return Timestamp.from_packed(packed, self.node_id)
