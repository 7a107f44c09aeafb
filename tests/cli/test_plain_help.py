"""Help, spoken plainly: every command shows an example, every option is described, and every
default is shown (issue 15, item 6). Walks the whole command tree, so a new command or option
without them fails here."""

from __future__ import annotations

import shlex
from pathlib import Path

import click
import pytest

from feral.cli.examples import EXAMPLES
from feral.cli.main import cli

from .helpers import feral_process


def command_tree(command: click.Command, path: str = "feral") -> list[tuple[str, click.Command]]:
    """Every command under ``command``, loaded as a user's call would load it: through the
    group's listing and ``get_command`` (the lazy groups give a command its ``--home`` and its
    example there, cli/lazy_group.py)."""
    found = [(path, command)]
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            child = command.get_command(ctx, name)
            assert child is not None, f"{path} {name}"
            found.extend(command_tree(child, f"{path} {name}"))
    return found


TREE = command_tree(cli)


def root_context() -> click.Context:
    """The context ``feral`` itself gives its commands: with ``-h`` as a help option.

    Click caches each command's help option the first time it builds one, from the context's
    ``help_option_names``: a context made without this parent would leave ``--help`` alone
    cached, and a later ``feral demo -h`` in the same process would fail.
    """
    return click.Context(cli, info_name="feral", **cli.context_settings)


def rendered_help(path: str, command: click.Command) -> str:
    ctx = click.Context(command, info_name=path, parent=root_context(), show_default=True)
    return command.get_help(ctx)


@pytest.mark.parametrize(("path", "command"), TREE, ids=[p for p, _ in TREE])
def test_every_command_shows_an_example_of_itself(path: str, command: click.Command) -> None:
    text = rendered_help(path, command)
    assert "Example" in text, path
    for example in EXAMPLES[path]:
        assert example.startswith(path), (path, example)
        assert f"  {example}" in text


@pytest.mark.parametrize(("path", "command"), TREE, ids=[p for p, _ in TREE])
def test_every_example_parses_as_its_command(
    path: str, command: click.Command, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the files an example names exist here
    for example in EXAMPLES[path]:
        tokens = shlex.split(example)[len(path.split()) :]
        for token in tokens:
            if token.endswith(".jsonl"):
                (tmp_path / token).touch()
        command.make_context(
            path, tokens, parent=root_context()
        )  # a missing argument or unknown option raises


def test_no_example_names_a_command_that_does_not_exist() -> None:
    assert sorted(EXAMPLES) == sorted(path for path, _ in TREE)


@pytest.mark.parametrize(("path", "command"), TREE, ids=[p for p, _ in TREE])
def test_every_option_is_described_and_shows_its_default(path: str, command: click.Command) -> None:
    ctx = click.Context(command, info_name=path, parent=root_context(), show_default=True)
    for param in command.get_params(ctx):
        if not isinstance(param, click.Option) or param.hidden:
            continue
        record = param.get_help_record(ctx)
        assert record is not None, (path, param.name)
        assert (param.help or "").strip(), f"{path} {param.opts[0]} has no help text"
        default = param.get_default(ctx, call=False)
        unset = default in (None, False, ()) or type(default).__name__ == "Sentinel"
        if not unset and "help" not in param.opts[0]:
            assert "default" in record[1], f"{path} {param.opts[0]} hides its default"


@pytest.mark.parametrize("path", ["feral", "feral memory search", "feral sync peers add"])
def test_help_is_what_a_user_sees(path: str) -> None:
    done = feral_process(Path("/nonexistent"), *path.split()[1:], "-h")
    assert done.returncode == 0, done.stderr
    assert "Example" in done.stdout
    assert "--home" in done.stdout
