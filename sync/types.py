"""Named types shared by every layer, so signatures say what a string or an integer holds."""

from __future__ import annotations

from typing import NewType

__all__ = ["NodeId", "PackedHLC", "RowId", "VersionVector"]

NodeId = NewType("NodeId", str)
"""A node's id: the fingerprint of its public key (lower-case base32, 32 characters)."""

RowId = NewType("RowId", str)
"""The primary key of a replicated row."""

PackedHLC = NewType("PackedHLC", int)
"""A hybrid logical clock reading packed as ``wall_ms << 16 | counter``."""

VersionVector = dict[NodeId, int]
"""For each origin node, the packed HLC of the newest of its log entries held here.

Each node writes its own log entries in strictly increasing HLC order and every copy of that log
is received in order, so holding origin X's entry stamped h means holding all of X's entries
stamped at or below h. That is why the vector is keyed by origin and never by a single clock:
relayed rows carry old stamps (DESIGN §4, "Cursor ≠ clock")."""
