"""Every field of a snapshot page off the wire is checked before a row is merged
(sync/snapshot_messages.py): a page whose range, rows or final flag is not of its shape is
refused with a decode error naming the field, never merged or half-read."""

from __future__ import annotations

import msgpack
import pytest

from feral.sync.codec import PROTOCOL_VERSION, decode_message
from feral.sync.errors import DecodeError
from feral.sync.snapshot_messages import MAX_SNAPSHOT_ROWS, SnapshotPage

NODE = "a" * 32
ROW = ["r1", 5, NODE, ["alice", "likes", "tea", 1.0, None, 1, False]]
VALID = {"after": "", "through": None, "rows": [ROW], "final": True}


def frame(**fields: object) -> bytes:
    """A snapshot page of the facts table, with ``fields`` in place of the valid ones."""
    page = {**VALID, **fields}
    return bytes(msgpack.packb(
        [PROTOCOL_VERSION, SnapshotPage.KIND, {}, {}, 0, 2, page["after"], page["through"],
         page["rows"], page["final"]]
    ))  # fmt: skip


def test_the_valid_page_these_cases_start_from_is_accepted() -> None:
    page = decode_message(frame())
    assert isinstance(page, SnapshotPage)
    assert [delta.row_id for delta in page.rows] == ["r1"]


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"after": 5}, "range"),
        ({"through": 7, "final": False}, "range"),
        ({"rows": "r1"}, "rows"),
        ({"rows": [ROW] * (MAX_SNAPSHOT_ROWS + 1)}, "rows"),
        ({"final": 1}, "final"),
        ({"through": "r5"}, "final"),  # the final page of a table has no end but the table's
        ({"rows": [ROW[:3]]}, "4 items"),
        ({"rows": [[5, *ROW[1:]]]}, "id"),
        ({"rows": [[*ROW[:3], "alice likes tea"]]}, "values"),
    ],
)
def test_a_page_with_a_field_out_of_shape_is_refused(fields: dict[str, object], named: str) -> None:
    with pytest.raises(DecodeError, match=named):
        decode_message(frame(**fields))
