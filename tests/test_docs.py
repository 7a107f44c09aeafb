"""Every ``feral`` command is documented in README.md and has help text."""

from __future__ import annotations

from pathlib import Path

import click
from click.testing import CliRunner

from feral.cli.main import cli

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


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


def test_every_command_is_in_the_readme():
    missing = [path for path, _ in command_paths(cli) if path not in README]
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
