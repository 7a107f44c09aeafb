"""msgpack encoding of pages and row values, with strict decoder limits.

Wire layout of a page (one msgpack array; DESIGN §5 puts one message in each frame)::

    [PROTOCOL_VERSION, KIND_PAGE, origin, after,
     [[table_code, hlc, row_id, rest | nil, prior | nil], ...]]

``rest`` is the row's values after the id, in the table's column order, so column names never
travel and a delta costs a few bytes beyond its values; ``nil`` marks a tombstone. The origin is
written once per page, since a page holds one origin's log entries. ``prior`` is ``[hlc, origin]``
of the version the write replaced at its origin, ``nil`` when it replaced none, and ``[0, ""]``
when that is unknown (an entry written before protocol version 3).

Decoding never trusts its input: the frame size is capped before parsing, msgpack extension types
(including its Timestamp) are refused, map keys must be strings, duplicate keys are refused, and
every decoded page is validated against the replicated schema. Anything else raises
:class:`DecodeError` or :class:`SchemaError`, never ``KeyError`` or ``TypeError``.
"""

from __future__ import annotations

from typing import Any

import msgpack

from .delta import Delta, Page, Version
from .errors import DecodeError, FeralError
from .invitation import Join
from .messages import Ack, Auth, CaughtUp, ErrorMessage, Hello, Pending, Vector
from .schema import Value, table_by_code, table_by_name
from .snapshot_messages import SnapshotAck, SnapshotPage
from .types import NodeId, RowId
from .versions import FIRST_NEGOTIATING, ProtocolRange

__all__ = [
    "KIND_PAGE",
    "MAX_FRAME_BYTES",
    "PROTOCOL_VERSION",
    "SPOKEN",
    "Message",
    "decode_message",
    "decode_page",
    "decode_values",
    "encode_message",
    "encode_page",
    "encode_values",
    "unpack_frame",
]

PROTOCOL_VERSION = 3
SPOKEN = ProtocolRange(FIRST_NEGOTIATING, PROTOCOL_VERSION)
"""The protocol versions this release speaks: 3 only (version 2 cannot negotiate, PROTOCOL §10)."""
KIND_PAGE = 1
MAX_FRAME_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 8


def _refuse_ext(code: int, data: bytes) -> object:
    raise DecodeError(f"msgpack extension type {code} is not allowed")


def _refuse_duplicates(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise DecodeError("duplicate keys in a map")
    return result


def unpack_frame(data: bytes) -> Any:
    """Decode one msgpack document with every limit set, and refuse non-plain values in it."""
    obj = _unpack(data)
    _check_plain(obj, 0)
    return obj


def _unpack(data: bytes) -> Any:
    """The one place bytes become objects: size cap, no extension types, no duplicate keys.

    Typed decoders (pages, messages, row values) use this directly: they check every field's
    type exactly, which already refuses a Timestamp or a nested container where none belongs,
    so walking the whole tree first (``unpack_frame``) would only double the work.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise DecodeError("a frame must be bytes")
    if len(data) > MAX_FRAME_BYTES:
        raise DecodeError(f"frame of {len(data)} bytes exceeds {MAX_FRAME_BYTES}")
    try:
        obj = msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=True,
            ext_hook=_refuse_ext,
            object_pairs_hook=_refuse_duplicates,
            timestamp=0,
        )
    except FeralError:
        raise
    except Exception as exc:  # msgpack raises a zoo: ExtraData, FormatError, ValueError, ...
        raise DecodeError(f"malformed msgpack: {type(exc).__name__}: {exc}") from exc
    return obj


def _check_plain(obj: object, depth: int) -> None:
    """Refuse deep nesting and any value that is not a plain msgpack type (e.g. a Timestamp)."""
    if depth > MAX_DEPTH:
        raise DecodeError(f"nesting deeper than {MAX_DEPTH}")
    if isinstance(obj, list):
        for item in obj:
            _check_plain(item, depth + 1)
    elif isinstance(obj, dict):
        for value in obj.values():
            _check_plain(value, depth + 1)
    elif obj is not None and not isinstance(obj, str | int | float | bool | bytes):
        raise DecodeError(f"value of type {type(obj).__name__} is not allowed")


def _pack(obj: object) -> bytes:
    try:
        data: bytes = msgpack.packb(obj, use_bin_type=True)
    except (OverflowError, TypeError, ValueError) as exc:
        raise DecodeError(f"cannot encode: {exc}") from exc
    return data


def encode_values(values: tuple[Value, ...]) -> bytes:
    """Encode a row's values (column order) for the delta log."""
    return _pack(list(values))


def decode_values(data: bytes) -> tuple[Value, ...]:
    """Decode what :func:`encode_values` wrote."""
    obj = _unpack(data)
    if not isinstance(obj, list):
        raise DecodeError("row values must be an array")
    return tuple(obj)


def encode_page(page: Page, version: int = PROTOCOL_VERSION) -> bytes:
    """Encode a page, tagged ``version``; see the module docstring for the layout."""
    entries = [
        [
            table_by_name(d.table).code,
            d.hlc,
            d.row_id,
            None if d.values is None else list(d.values[1:]),
            None if d.prior is None else [d.prior.hlc, d.prior.origin],
        ]
        for d in page.deltas
    ]
    return _pack([version, KIND_PAGE, page.origin, page.after, entries])


def decode_page(data: bytes, version: int = PROTOCOL_VERSION) -> Page:
    """Decode and validate a page.

    Raises:
        DecodeError: the bytes are not a page.
        SchemaError: a delta names an unknown table or holds a wrongly typed value.
        ProtocolError: a malformed origin, cursor or stamp order.
    """
    return _page_from(_unpack(data), version)


def _page_from(obj: object, expected: int) -> Page:
    if not isinstance(obj, list) or len(obj) != 5:
        raise DecodeError("a page must be an array of 5 items")
    version, kind, origin, after, entries = obj
    if type(version) is not int or version != expected:
        raise DecodeError(f"unsupported protocol version {version!r}")
    if type(kind) is not int or kind != KIND_PAGE:
        raise DecodeError(f"expected a page (kind {KIND_PAGE}), got kind {kind!r}")
    if not isinstance(entries, list):
        raise DecodeError("a page's deltas must be an array")
    page = Page(origin, after, tuple(_decode_entry(e, origin) for e in entries))
    page.check()
    return page


def _decode_entry(entry: object, origin: NodeId) -> Delta:
    if not isinstance(entry, list) or len(entry) != 5:
        raise DecodeError("a delta must be an array of 5 items")
    code, hlc, row_id, rest, prior = entry
    table = table_by_code(code)
    if rest is None:
        values = None
    elif isinstance(rest, list):
        values = (row_id, *rest)
    else:
        raise DecodeError("a delta's values must be an array or nil")
    return Delta(table.name, RowId(row_id), hlc, origin, values, _prior_from(prior))


def _prior_from(prior: object) -> Version | None:
    """The replaced version as sent (checked with the delta: :func:`~.delta.check_prior`)."""
    if prior is None:
        return None
    if not isinstance(prior, list) or len(prior) != 2:
        raise DecodeError("a delta's prior must be an array of 2 items or nil")
    hlc, origin = prior
    if type(hlc) is not int or type(origin) is not str:
        raise DecodeError("a delta's prior must be [hlc, origin]")
    return Version(hlc, NodeId(origin))


Message = (
    Hello | Auth | Vector | Page | Ack | CaughtUp | ErrorMessage | Pending | Join
    | SnapshotPage | SnapshotAck
)  # fmt: skip
"""Everything that travels in a ``/sync`` frame."""

_Fielded = (
    Hello | Auth | Vector | Ack | CaughtUp | ErrorMessage | Pending | Join | SnapshotPage
    | SnapshotAck
)  # fmt: skip
_MESSAGE_TYPES: dict[int, type[_Fielded]] = {
    cls.KIND: cls
    for cls in (
        Hello,
        Auth,
        Vector,
        Ack,
        CaughtUp,
        ErrorMessage,
        Pending,
        Join,
        SnapshotPage,
        SnapshotAck,
    )  # fmt: skip
}


def encode_message(message: Message, version: int = PROTOCOL_VERSION) -> bytes:
    """One frame for ``message``: ``[version, kind, *fields]``."""
    if isinstance(message, Page):
        return encode_page(message, version)
    return _pack([version, message.KIND, *message.to_fields()])


def decode_message(data: bytes, version: int = PROTOCOL_VERSION) -> Message:
    """Decode and validate one frame of the link's ``version``.

    A Hello or an Error is read whatever version tags it (sync/versions.py): their layout is
    fixed from version 3 on, so two nodes can tell each other which versions they speak, or
    why they refuse, before they agree on one. Every other kind must be tagged ``version``.

    Raises:
        DecodeError: not a message of this protocol version.
        SchemaError, ProtocolError: a page that fails validation.
    """
    obj = _unpack(data)
    if not isinstance(obj, list) or len(obj) < 2:
        raise DecodeError("a message must be an array starting with version and kind")
    tag, kind = obj[0], obj[1]
    if type(tag) is not int or not 1 <= tag <= 1 << 16:
        raise DecodeError(f"unsupported protocol version {tag!r}")
    if kind == Hello.KIND and type(kind) is int:
        return _hello_from(tag, obj[2:])
    if kind == ErrorMessage.KIND and type(kind) is int:
        return ErrorMessage.from_fields(obj[2:])
    if tag != version:
        raise DecodeError(f"unsupported protocol version {tag!r}")
    if type(kind) is not int:
        raise DecodeError(f"a message kind must be an integer, got {kind!r}")
    if kind == KIND_PAGE:
        return _page_from(obj, version)
    cls = _MESSAGE_TYPES.get(obj[1]) if isinstance(obj[1], int) else None
    if cls is None:
        raise DecodeError(f"unknown message kind {obj[1]!r}")
    return cls.from_fields(obj[2:])


def _hello_from(tag: int, fields: list[object]) -> Hello:
    """A Hello of any version: before 3 it has seven fields and speaks only its own version;
    after 3 it may have fields appended, which this version does not read."""
    if tag < FIRST_NEGOTIATING:
        return Hello.from_fields([*fields, tag, tag])
    if tag > FIRST_NEGOTIATING and len(fields) > Hello.FIELDS:
        fields = fields[: Hello.FIELDS]
    hello = Hello.from_fields(fields)
    if hello.protocol_low != tag:
        raise DecodeError(
            f"a Hello is tagged with the lowest protocol version its sender speaks "
            f"({hello.protocol_low}), not {tag}"
        )
    return hello
