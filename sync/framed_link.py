"""One link's frames and life, whatever flow it carries: the link's :class:`State`, the close
codes, the frames going out and the events for the node, decoding with the agreed wire version,
the peer's error frames, and refusing (:meth:`FramedLink.fail`).

Written in the manner of python-websockets' ``Protocol`` base class, which its client and server
protocols extend: :class:`~feral.sync.session.SyncSession` adds the sync flow (handshake,
vectors, pages, acks, CaughtUp) on top of this, and its snapshot subclass the snapshot messages.
Kept apart so that the flow reads without the framing, and the framing (what every frame in or
out goes through) is one short class. No I/O, like the rest of sync/.
"""

from __future__ import annotations

import enum

from .codec import Message, decode_message, encode_message
from .errors import DecodeError, FeralError, SchemaError
from .events import Event, Failed
from .messages import ErrorMessage
from .text import printable
from .versions import Wire

__all__ = [
    "CLOSE_BAD_DATA",
    "CLOSE_INTERNAL",
    "CLOSE_POLICY",
    "CLOSE_PROTOCOL",
    "FramedLink",
    "State",
]

CLOSE_PROTOCOL = 1002
CLOSE_BAD_DATA = 1007
CLOSE_POLICY = 1008
CLOSE_INTERNAL = 1011


class State(enum.IntEnum):
    """Where a link is in its life."""

    HANDSHAKE = 0
    OPEN = 1
    CLOSING = 2
    CLOSED = 3


class FramedLink:
    """The frames in and out of one link, its state and its events (module docstring).

    Args:
        wire: the protocol versions this node speaks; the agreed one is set at the Hellos.
    """

    def __init__(self, wire: Wire) -> None:
        self.state = State.HANDSHAKE
        self.close_code: int | None = None
        self._frames: list[bytes] = []
        self._events: list[Event] = []
        self._wire = wire
        """The protocol version of this link's frames (agreed at the Hellos)."""

    def frames_to_send(self) -> list[bytes]:
        """Frames to write to the socket, in order; each call drains them."""
        frames, self._frames = self._frames, []
        return frames

    def events_received(self) -> list[Event]:
        """Things the node must act on, in order; each call drains them."""
        events, self._events = self._events, []
        return events

    @property
    def protocol_version(self) -> int | None:
        """The protocol version agreed with the peer (``None`` until its Hello passed)."""
        return self._wire.agreed

    def receive_eof(self) -> None:
        """The connection ended."""
        self.state = State.CLOSED

    def fail(self, code: str, message: str, close_code: int) -> None:
        """Refuse: send a typed error frame, then the node closes with ``close_code``."""
        if self.state >= State.CLOSING:
            return
        self._send(ErrorMessage(code, message[:1000]))
        self.state = State.CLOSING
        self.close_code = close_code
        self._events.append(Failed(code, message, False, close_code))

    def receive_frame(self, data: bytes) -> None:
        """Feed one frame received from the peer: refused (and the link fails) if it does not
        decode, the peer's error raised as :class:`Failed` (and the link closes), any other
        message handed to the flow (:meth:`_receive`)."""
        if self.state >= State.CLOSING:
            return
        try:
            message = decode_message(data, self._wire.send_tag)
        except (DecodeError, SchemaError) as exc:
            self.fail("bad_frame", str(exc), CLOSE_BAD_DATA)
            return
        except FeralError as exc:
            self.fail("protocol_error", str(exc), CLOSE_PROTOCOL)
            return
        if isinstance(message, ErrorMessage):
            self.state = State.CLOSING
            # The peer's words, escaped once here for every place they are shown or kept.
            code, text = printable(message.code), printable(message.message)
            self._events.append(Failed(code, text, True, CLOSE_POLICY))
        else:
            self._receive(message)

    def _receive(self, message: Message) -> None:
        """Handle a message of the flow the link carries: its subclass's (sync/session.py).
        A bare link carries none, so there is nothing to do."""

    def _raise(self, event: Event) -> None:
        """Hand ``event`` to the node (:meth:`events_received`)."""
        self._events.append(event)

    def _send(self, message: Message) -> None:
        wire = self._wire
        tag = wire.error_tag if isinstance(message, ErrorMessage) else wire.send_tag
        self._frames.append(encode_message(message, tag))
