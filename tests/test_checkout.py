"""tests/checkout.py refuses a ``feral`` that is not this checkout."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.checkout import NOT_INSTALLED, SOURCES, differences


def installed_copy(tmp_path: Path) -> dict[str, Path]:
    """A copy of the checkout laid out as site-packages holds it."""
    site = tmp_path / "site" / "feral"
    folders: dict[str, Path] = {}
    for name, folder in SOURCES.items():
        target = site.joinpath(*name.split(".")[1:])
        skipped = shutil.ignore_patterns("__pycache__", *NOT_INSTALLED.get(name, ()))
        shutil.copytree(folder, target, dirs_exist_ok=True, ignore=skipped)
        folders[name] = target
    return folders


def test_this_checkout_is_what_the_tests_import():
    assert differences() == []


def test_an_identical_copy_passes_and_an_edited_or_missing_module_is_named(tmp_path):
    folders = installed_copy(tmp_path)
    assert differences(folders) == []
    (folders["feral.node"] / "links" / "peer.py").write_text("# an older copy\n")
    (folders["feral.sync"] / "hlc.py").unlink()
    assert differences(folders) == ["feral.node.links.peer", "feral.sync.hlc"]
