"""Which protocol versions two nodes speak, the one they use, and the refusal when none is common.

From protocol version 3 on, each side's Hello says the range of versions it speaks, ``[low,
high]``; both sides take the highest version in both ranges, so each computes the same one
from the same two Hellos and no further message is needed (docs/PROTOCOL.md §4, §10). With no
common version, both sides refuse with ``protocol_mismatch``, and each message names the side
that must upgrade (the one whose range lies wholly below the other's).

A node of version 2 or 1 cannot negotiate: its Hello has no range and its decoder refuses
every frame not tagged with its own version. Its Hello is still read (its layout is the first
seven fields of ours), so the refusal names it, and the Error this node sends it is tagged with
its version, which it can decode and show (:func:`error_tag`).

Kept apart from sync/session.py, which only holds the :class:`Wire` of its link.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import DecodeError

__all__ = [
    "FIRST_NEGOTIATING",
    "ProtocolRange",
    "Wire",
    "mismatch_text",
]

FIRST_NEGOTIATING = 3
"""The first version whose Hello says a range: Hello and Error keep their layout from here on
(a later version may only append fields to a Hello), so any two such nodes can read each
other's first frames whatever versions they speak."""

MAX_VERSION = 1 << 16


@dataclass(frozen=True)
class ProtocolRange:
    """The protocol versions a node speaks, ``low`` to ``high`` inclusive."""

    low: int
    high: int

    def __post_init__(self) -> None:
        for value in (self.low, self.high):
            if isinstance(value, bool) or not isinstance(value, int):
                raise DecodeError("a protocol version must be an integer")
        if not 1 <= self.low <= self.high <= MAX_VERSION:
            raise DecodeError(
                f"protocol range {self.low}..{self.high} must satisfy 1 <= low <= high <= "
                f"{MAX_VERSION}"
            )

    def common(self, other: ProtocolRange) -> int | None:
        """The highest version both ranges hold, or ``None``."""
        best = min(self.high, other.high)
        return best if best >= max(self.low, other.low) else None

    def __str__(self) -> str:
        return str(self.low) if self.low == self.high else f"{self.low} to {self.high}"


def mismatch_text(local: ProtocolRange, peer: ProtocolRange, me: str, them: str) -> str:
    """The refusal when ``local`` and ``peer`` share no version, naming who must upgrade.

    ``me`` and ``them`` name the two nodes as the reader knows them (name and id).
    """
    older, newer = (them, me) if peer.high < local.low else (me, them)
    old = peer.high < FIRST_NEGOTIATING
    cannot = f" (a node of protocol version {peer.high} cannot negotiate)" if old else ""
    return (
        f"protocol version mismatch: {them} speaks sync protocol {peer}{cannot}, this node "
        f"({me}) speaks {local}; {older} runs an older version of feral, not compatible with "
        f"{newer}: upgrade feral on {older}"
    )


def error_tag(local: ProtocolRange, peer_tag: int | None) -> int:
    """The version an Error sent before negotiation is tagged with: the peer's own when it is
    older than ours (so a version-2 node can read why it was refused), else our lowest."""
    return local.low if peer_tag is None else max(1, min(local.low, peer_tag))


@dataclass
class Wire:
    """The version frames of one link are tagged with: before the Hellos, the lowest this node
    speaks (every node from version 3 on reads a Hello or an Error of any version); after, the
    one both sides agreed on, and a frame of any other version is refused as ``bad_frame``."""

    spoken: ProtocolRange
    agreed: int | None = None
    peer_tag: int | None = None
    """The version the peer's first frame was tagged with (its lowest, or its only one)."""

    @property
    def send_tag(self) -> int:
        return self.spoken.low if self.agreed is None else self.agreed

    @property
    def error_tag(self) -> int:
        return self.agreed if self.agreed is not None else error_tag(self.spoken, self.peer_tag)
