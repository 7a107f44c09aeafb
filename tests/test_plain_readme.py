"""The README's first commands work where the system Python is externally managed (issue 15,
item 6), and CI runs the README's test command exactly as it is written."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def first_commands() -> list[str]:
    block = re.search(r"```sh\n(.*?)```", README, re.S)
    assert block is not None
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_the_first_command_makes_a_virtual_environment() -> None:
    first = first_commands()[0]
    assert first.startswith("python3 -m venv .venv && . .venv/bin/activate")
    assert "pipx install ." in README[:2500]


def test_ci_runs_the_readme_test_command_exactly() -> None:
    (test_line,) = [line for line in first_commands() if "pytest" in line]
    assert test_line == "python3 -m pip install '.[test]' && python3 -m pytest"
    assert f"\n{test_line}\n" in CI
    assert "python3 -m venv .venv" in CI
