"""How fast one paired peer may send: token buckets for frames and bytes, and when to drop it.

Pure accounting (the caller passes the time), so the rules are tested without a clock: the
server (node/links/link_guard.py) asks :meth:`PeerPace.admit` about every frame a peer sent, sleeps
for the wait it is told before reading the next one (the peer's sends then back up in its own
socket, and nobody else's link waits), and refuses the link once the peer has been held back
without a pause for longer than the drop delay: a peer that sends only as fast as it is let
is flooding, not catching up, since a catch-up waits for acknowledgements between pages.

Bytes only slow a peer, never drop it: a long catch-up of large rows may run at the byte cap
for minutes and is still a peer doing its job.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Pace", "PeerPace", "TokenBucket"]


@dataclass
class TokenBucket:
    """``rate`` tokens a second, holding at most ``capacity``; full at first.

    Taking more than it holds leaves it in debt: the caller waits until the debt is paid.
    """

    rate: float
    capacity: float
    tokens: float = field(default=-1.0)
    stamp: float | None = None

    def __post_init__(self) -> None:
        if self.tokens < 0:
            self.tokens = self.capacity

    def take(self, amount: float, now: float) -> float:
        """Take ``amount``; the seconds to wait before the bucket is out of debt (0: none)."""
        if self.stamp is not None and now > self.stamp:
            self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now if self.stamp is None else max(now, self.stamp)
        self.tokens -= amount
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate


@dataclass(frozen=True)
class Pace:
    """What to do with one frame: wait ``wait_s`` before reading the next; or ``drop`` the link."""

    wait_s: float
    drop: bool = False


@dataclass
class PeerPace:
    """One peer's caps, over all its links: ``frames_per_s`` (a burst of ``burst_s`` seconds'
    worth), ``bytes_per_min`` (a minute's worth at once), and ``drop_after_s`` of being held back
    by the frame cap without a pause."""

    frames_per_s: float
    bytes_per_min: float
    drop_after_s: float
    burst_s: float = 2.0
    held_since: float | None = None
    frames: TokenBucket = field(init=False)
    bytes: TokenBucket = field(init=False)

    def __post_init__(self) -> None:
        self.frames = TokenBucket(self.frames_per_s, self.frames_per_s * self.burst_s)
        self.bytes = TokenBucket(self.bytes_per_min / 60.0, self.bytes_per_min)

    def admit(self, size: int, now: float, weight: int = 1) -> Pace:
        """Account one frame of ``size`` bytes received at ``now``, counted as ``weight``
        frames (a request that costs the server more than a frame: node/links/link_guard.py), but
        never more than the whole burst: under a cap whose burst is below one Vector, a peer's
        Vector at each reconnect would otherwise hold it back, and its traffic after keep it
        held until it was dropped."""
        frame_wait = self.frames.take(min(weight, self.frames.capacity), now)
        byte_wait = self.bytes.take(size, now)
        if frame_wait == 0:
            self.held_since = None
        elif self.held_since is None:
            self.held_since = now
        held_for = 0.0 if self.held_since is None else now - self.held_since
        return Pace(max(frame_wait, byte_wait), drop=held_for >= self.drop_after_s)

    @property
    def held(self) -> bool:
        """Whether the frame cap is holding this peer back right now."""
        return self.held_since is not None
