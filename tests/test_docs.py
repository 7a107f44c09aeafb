"""Every ``feral`` command is documented in docs/CLI.md and has help text; the README stays
short and links each doc."""

from __future__ import annotations

from pathlib import Path

import click
from click.testing import CliRunner

from feral.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
CLI_DOC = (ROOT / "docs" / "CLI.md").read_text(encoding="utf-8")


def command_paths(group: click.Group, prefix: str = "feral") -> list[tuple[str, click.Command]]:
    paths = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):  # lazy groups (cli/lazy_group.py) load on get_command
        command = group.get_command(ctx, name)
        assert command is not None, name
        path = f"{prefix} {name}"
        paths.append((path, command))
        if isinstance(command, click.Group):
            paths.extend(command_paths(command, path))
    return paths


def test_every_command_is_in_the_cli_doc():
    missing = [path for path, _ in command_paths(cli) if path not in CLI_DOC]
    assert missing == []


def test_every_command_has_help_text():
    assert [path for path, command in command_paths(cli) if not (command.help or "").strip()] == []


def test_every_command_answers_dash_h():
    runner = CliRunner()
    for path, _ in command_paths(cli):
        result = runner.invoke(cli, [*path.split()[1:], "-h"], catch_exceptions=False)
        assert result.exit_code == 0, path
        assert "Usage:" in result.output


def test_the_readme_opens_with_the_two_newcomer_commands():
    head = README[:1500]
    assert "feral demo" in head
    assert "pytest" in head


def test_the_readme_stays_short_and_links_each_doc():
    assert len(README.splitlines()) <= 250
    for doc in ("CLI", "OPERATIONS", "MEMORY", "ARCHITECTURE", "API", "MCP", "PYTHON", "PROTOCOL"):
        assert f"(docs/{doc}.md)" in README, doc
        assert (ROOT / "docs" / f"{doc}.md").is_file(), doc
    assert "(benchmarks/README.md)" in README
