"""Entries a peer cannot take yet are held back per origin, never the whole stream (REPLICATION §7).

A receiver takes stamps up to twice the skew window ahead of its clock (sync/hlc.py's
``delta_limit_ms``). An entry beyond that (from a device whose clock ran ahead, and was maybe
corrected since) used to make the receiver refuse the whole page, which ended the link: one
far-ahead origin cut every other origin of the stream off, the relay's own writes included.

Now the sender stops each origin's stream below the receiver's limit: it knows the receiver's
clock from the handshake (the offset in its Hello), so it sends an origin's entries only up to
:func:`send_ceiling`; each origin's log is sent in stamp order, so what it holds back is the end
of that origin's log, and the rest of the stream goes on. The receiver still checks every
stamp: a clock estimate that is off (a clock changed while the link is up) still ends in the
refusal, and the next handshake measures the clock again.

The round is quiet when both sides hold the same, but for the origins whose difference is so
explained (:func:`same_holdings`): the sender's newest stamp of the origin lies above what it
sent, or the receiver's peer holds it above what it takes. The receiver names each such origin
(its status and log, like the refusal); the entries follow once its clock comes within twice
the window of them, at the next request (anti-entropy, a write, the next link).
"""

from __future__ import annotations

from .hlc import COUNTER_BITS, COUNTER_MASK, delta_limit_ms
from .messages import CaughtUp
from .types import NodeId, VersionVector

__all__ = ["SEND_MARGIN_MS", "beyond", "same_holdings", "send_ceiling", "take_limit"]

SEND_MARGIN_MS = 5_000
"""How far inside the receiver's limit the sender stays: the offset measured at the handshake
includes the Hello's time in flight, and time passes before the receiver checks."""


def send_ceiling(now_ms: int, peer_offset_ms: int, window_ms: int) -> int:
    """The newest packed stamp to send a peer whose clock is ``peer_offset_ms`` from ours."""
    wall = now_ms + peer_offset_ms + delta_limit_ms(window_ms) - SEND_MARGIN_MS
    return (max(wall, 0) << COUNTER_BITS) | COUNTER_MASK


def take_limit(now_ms: int, window_ms: int) -> int:
    """The newest packed stamp a peer may hold back from this node and still be in step: above
    what the peer's ceiling can be (twice the margin, for the estimate and the time since)."""
    wall = now_ms + delta_limit_ms(window_ms) - 2 * SEND_MARGIN_MS
    return (max(wall, 0) << COUNTER_BITS) | COUNTER_MASK


def beyond(theirs: VersionVector, ours: VersionVector, limit: int) -> dict[NodeId, int]:
    """The origins a peer holds newer entries of than ours, beyond ``limit``: its newest stamp."""
    return {
        origin: stamp
        for origin, stamp in sorted(theirs.items())
        if stamp > ours.get(origin, 0) and stamp > limit
    }


def same_holdings(
    said: CaughtUp | None, heard: CaughtUp | None, sent_below: int | None, taken_below: int | None
) -> bool:
    """Whether our last CaughtUp and the peer's name the same holdings, but for origins held
    back: ours ahead beyond ``sent_below`` (our last ceiling for the peer), or the peer's ahead
    beyond ``taken_below`` (our :func:`take_limit` when its CaughtUp came)."""
    if said is None or heard is None:
        return False
    if said.same_holdings(heard):
        return True
    for origin in said.vector.keys() | heard.vector.keys():
        ours, theirs = said.vector.get(origin, 0), heard.vector.get(origin, 0)
        if ours == theirs:
            if said.entries.get(origin, 0) != heard.entries.get(origin, 0):
                return False  # a hole: not explained by any clock
        elif not _explained(ours, theirs, sent_below, taken_below):
            return False
    return True


def _explained(ours: int, theirs: int, sent_below: int | None, taken_below: int | None) -> bool:
    if ours > theirs:
        return sent_below is not None and ours > sent_below
    return taken_below is not None and theirs > taken_below
