"""Whether this node's own stamps run ahead of its clock, and the way back (issue 11).

A clock that ran ahead and was then corrected leaves this node's newest stamps in its future.
Its next stamps must stay above them, so they are ahead too: peers refuse them (received stamps
may be at most twice the skew window ahead, docs/REPLICATION.md §7), and a day ahead local writes
stop. The user is told at once: ``sync status``, the serve log at start, and a warning after
any write. ``feral sync clock-reset`` (:func:`reset_clock`) brings the stamps back.
"""

from __future__ import annotations

from dataclasses import dataclass

from feral.storage.db.connection import Connection
from feral.storage.log import delta_log
from feral.storage.log.restamp import Restamped, restamp_ahead
from feral.sync.hlc import COUNTER_BITS, COUNTER_MASK
from feral.sync.types import PackedHLC
from feral.sync.units import format_ms

from .clock_mark import read_mark, write_mark
from .node_kernel import NodeKernel

__all__ = ["ClockState", "ahead_warning", "clock_state", "reset_clock"]

RESET_COMMAND = "feral sync clock-reset"


@dataclass(frozen=True)
class ClockState:
    """This node's newest own stamp (packed) and how far its wall time is ahead of the clock."""

    newest: int
    ahead_ms: int
    warning: str | None


def ahead_warning(ahead_ms: int, window_ms: int) -> str | None:
    """The one-line warning for stamps ``ahead_ms`` ahead of the clock, if beyond the window.

    Beyond one window, a peer whose clock is a window behind this one refuses them.
    """
    if ahead_ms <= window_ms:
        return None
    return (
        f"this device's newest writes are stamped {format_ms(ahead_ms)} ahead of its clock, "
        "so peers refuse them; if the clock ran ahead and is right now, run: " + RESET_COMMAND
    )


async def clock_state(node: NodeKernel) -> ClockState:
    """Read the newest own stamp (database and clock mark) and compare it with the clock."""
    newest = max(
        read_mark(node.home),
        await node.store.read(delta_log.own_high_water, node.node_id),
    )
    ahead = (newest >> COUNTER_BITS) - node.now_ms() if newest else 0
    return ClockState(newest, ahead, ahead_warning(ahead, node.settings.sync.max_clock_skew_ms))


async def reset_clock(node: NodeKernel) -> Restamped:
    """Stamp this node's writes that lie ahead of its clock again, just above the clock.

    One transaction: the log, the rows, the vector and the clock mark move together (every
    writer of this home, a running ``feral serve`` included, resumes from the mark).

    Raises:
        ClockError: a peer already holds some of those writes (the message says what to do).
    """

    def restamp(conn: Connection) -> tuple[Restamped, int]:
        now, mark = node.now_ms(), read_mark(node.home)
        done = restamp_ahead(conn, node.node_id, now, mark)
        # Lowered only down to the clock: stamps below it that a database restored from an
        # older copy lost must still never be issued again (node/clock_mark.py).
        lowered = max(done.newest_after, min(mark, (now << COUNTER_BITS) | COUNTER_MASK))
        write_mark(node.home, lowered)
        return done, lowered

    result, lowered = await node.store.write(restamp)
    node.clock.last = PackedHLC(lowered)
    return result
