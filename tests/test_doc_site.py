"""The documentation builds as a site with mkdocs (docs/mkdocs.yml), strictly: a link to a page
or an anchor that does not exist fails the build. Runs where the ``docs`` extra is installed
(CI installs it); skipped elsewhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["index.html", "benchmarks/index.html"]
PAGES += [f"docs/{doc.stem}/index.html" for doc in sorted((ROOT / "docs").glob("*.md"))]


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config)]
    return subprocess.run([*command, "-d", str(site)], capture_output=True, text=True, timeout=300)


def test_the_docs_build_as_a_site_with_every_page(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    result = build(ROOT / "docs" / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stderr
    assert [page for page in PAGES if not (tmp_path / "site" / page).is_file()] == []


def test_a_broken_anchor_fails_the_build(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# A\n\n[b](#no-such-heading)\n", encoding="utf-8")
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: t\nvalidation:\n  links:\n    anchors: warn\n", encoding="utf-8")
    result = build(config, tmp_path / "site")
    assert result.returncode == 1 and "no-such-heading" in result.stderr
