"""A refused ``remember`` leaves the home as it was, even one whose database is not made yet.

``feral init`` makes the key and the settings; the database (and the model's digest file) are
made by the first command that opens the node. A fact that is refused (a secret, a blank part
of a triple) must be refused before that: a real ``feral`` process is run on a fresh home and
the home's files, names and bytes, are compared before and after.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import feral_process, init_home

REFUSED = [
    pytest.param(
        ["my email password is Qx7-lantern-88"],
        "Error: refused: the text contains what looks like a password (never stored); "
        "remove it and try again",
        id="secret",
    ),
    pytest.param(
        ["--subject", " ", "--predicate", "lives_in", "--object", "Porto"],
        "Error: subject, predicate and object must not be empty",
        id="blank-subject",
    ),
]


def home_files(home: Path) -> dict[str, bytes]:
    """Every file under ``home``, by its path inside it, with its bytes."""
    return {str(p.relative_to(home)): p.read_bytes() for p in home.rglob("*") if p.is_file()}


@pytest.mark.parametrize(("given", "refusal"), REFUSED)
def test_a_refused_remember_leaves_a_fresh_home_untouched(
    tmp_path: Path, given: list[str], refusal: str
) -> None:
    home = init_home(tmp_path / "home")
    before = home_files(home)
    assert "feral.db" not in before  # the case under test: no database yet

    result = feral_process(home, "memory", "remember", *given)

    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stderr.strip().splitlines() == [refusal]
    assert home_files(home) == before
