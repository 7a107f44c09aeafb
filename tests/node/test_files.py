"""Whole, private files in the node's home (node/home/files.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from feral.node.curation.wiki import WIKI_FOLDER, build_pages, write_pages
from feral.node.home.files import replace_private_file, write_private_file
from feral.sync.errors import HomeFileError

posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@posix_only
def test_write_private_file_replaces_a_loose_file_with_a_0600_one(tmp_path):
    target = tmp_path / "settings.json"
    target.write_text("old")
    target.chmod(0o644)
    write_private_file(target, b"new")
    assert target.read_bytes() == b"new"
    assert mode_of(target) == 0o600
    assert os.listdir(tmp_path) == ["settings.json"]


def test_write_private_file_into_a_missing_directory_is_a_home_file_error(tmp_path):
    with pytest.raises(HomeFileError, match="missing"):
        write_private_file(tmp_path / "missing" / "settings.json", b"{}")


@posix_only
@pytest.mark.parametrize("durable", [True, False])
def test_a_replaced_file_is_whole_private_and_leaves_no_temporary_file(tmp_path, durable):
    target = tmp_path / "page.md"
    target.write_bytes(b"old")
    replace_private_file(target, b"new\n" * 1000, durable=durable)
    assert target.read_bytes() == b"new\n" * 1000
    assert mode_of(target) == 0o600
    assert os.listdir(tmp_path) == ["page.md"]


def test_a_failed_replace_keeps_what_was_there_and_cleans_up(tmp_path):
    (tmp_path / "page.md").mkdir()  # a folder in the way: the rename fails
    (tmp_path / "page.md" / "inside").write_bytes(b"kept")
    with pytest.raises(OSError):
        replace_private_file(tmp_path / "page.md", b"new")
    assert (tmp_path / "page.md" / "inside").read_bytes() == b"kept"
    assert os.listdir(tmp_path) == ["page.md"]


@posix_only
def test_wiki_pages_are_private_and_leave_no_temporary_files(tmp_path):
    facts = [{"id": "f1", "subject": "Alice", "predicate": "age", "object": "30"}]
    pages = build_pages(facts, [])
    write_pages(tmp_path, pages, 0)
    folder = tmp_path / WIKI_FOLDER
    assert sorted(os.listdir(folder)) == [f"{page.slug}.md" for page in pages]
    assert all(mode_of(folder / name) == 0o600 for name in os.listdir(folder))
