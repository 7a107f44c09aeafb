"""The clock mark kept beside the database (node/clock_mark.py)."""

from __future__ import annotations

import pytest

from feral.node.clock_mark import MARK_FILE, read_mark, write_mark
from feral.sync.errors import HomeFileError
from feral.sync.hlc import MAX_PACKED


def test_no_file_and_an_empty_file_both_mean_no_mark(tmp_path):
    assert read_mark(tmp_path) == 0
    (tmp_path / MARK_FILE).write_text("")
    assert read_mark(tmp_path) == 0


@pytest.mark.parametrize("marks", [[1, 2], [MAX_PACKED, 7], [10**15, 3, 10**12]])
def test_the_last_mark_written_is_the_one_read_whatever_its_width(tmp_path, marks):
    for mark in marks:
        write_mark(tmp_path, mark)
    assert read_mark(tmp_path) == marks[-1]
    assert sorted(p.name for p in tmp_path.iterdir()) == [MARK_FILE]  # no temporary files
    assert (tmp_path / MARK_FILE).stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("text", ["-5", "12 o'clock", "1e9", "9" * 21, "\xff"])
def test_a_file_that_is_not_a_mark_is_refused_by_name(tmp_path, text):
    (tmp_path / MARK_FILE).write_bytes(text.encode("latin-1"))
    with pytest.raises(HomeFileError, match=MARK_FILE):
        read_mark(tmp_path)


def test_an_unwritable_mark_is_a_home_file_error(tmp_path):
    (tmp_path / MARK_FILE).mkdir()
    with pytest.raises(HomeFileError, match="cannot write the clock mark"):
        write_mark(tmp_path, 1)
