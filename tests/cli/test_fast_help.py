"""`feral --help` answers fast only if it imports no store, model, network or server module.

The command groups are lazy (cli/lazy_group.py) and the command modules import the node inside
their commands; one module-level import of the node from any command module would bring back
the whole start-up (the store, numpy, the model runtime, cryptography), silently. The probe
runs the real group in a fresh interpreter and reads ``sys.modules`` after it printed help.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from feral.cli.fast_help import TOP_HELP, WIDTH
from feral.cli.lazy_group import LazyGroup
from feral.cli.main import COMMANDS, SUMMARIES, cli

from .helpers import init_home, loaded_after, turn_off_embeddings

HEAVY = (
    "numpy",
    "onnxruntime",
    "tokenizers",
    "sqlite_vec",
    "sqlean",
    "msgpack",
    "websockets",
    "cryptography",
    "mcp",
    "starlette",
    "uvicorn",
    "asyncio",
    "msgspec",
    "feral.node.node",
    "feral.storage.store",
    "feral.storage.db.connection",
)
SERVER = ("websockets", "mcp", "starlette", "uvicorn", "feral.node.serve.service")


def test_help_imports_no_store_no_model_and_no_server() -> None:
    output, loaded = loaded_after(["--help"], HEAVY)
    assert "memory  Remember, search and manage memories." in output
    assert loaded == "", f"feral --help imported {loaded}"


def test_a_search_imports_no_server(tmp_path: Path) -> None:
    home = init_home(tmp_path / "home")  # a missing home is refused (cli/home.py)
    turn_off_embeddings(home)
    _, loaded = loaded_after(["--home", str(home), "memory", "search", "tea"], SERVER)
    assert loaded == "", f"feral memory search imported {loaded}"


def lazy_groups(group: click.Group) -> list[LazyGroup]:
    ctx = click.Context(group)
    found = [group] if isinstance(group, LazyGroup) else []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            found += lazy_groups(command)
    return found


def test_every_lazy_entry_is_a_command_of_that_name() -> None:
    groups = lazy_groups(cli)
    assert {g.name for g in groups} >= {"cli", "memory", "sync"}
    for group in groups:
        ctx = click.Context(group)
        for name in group.lazy_subcommands:
            command = group.get_command(ctx, name)
            assert command is not None and command.name == name, (group.name, name)


def commands_of(path: str) -> list[str]:
    group: click.Command | None = cli
    for name in path.split():
        assert isinstance(group, click.Group)
        group = group.get_command(click.Context(group), name)
    assert isinstance(group, click.Group)
    return group.list_commands(click.Context(group))


def test_each_group_lists_every_command_it_had_before_it_was_lazy() -> None:
    assert commands_of("") == "demo graph init log mcp memory serve sync wiki".split()
    assert commands_of("memory") == sorted(
        "boost conflicts digest distill episodes export forget gc get import ingest link list nuke "
        "prompt reembed remember resolve restore search stats".split()
    )
    assert commands_of("sync") == (
        "cert clock-reset invite join node-id now peers prune status".split()
    )


def test_help_imports_no_command_module() -> None:
    modules = tuple(target.split(":")[0] for target in COMMANDS.values())
    output, loaded = loaded_after(["--help"], modules)
    assert "serve   Run this node" in output
    assert loaded == "", f"feral --help imported {loaded}"


def test_each_summary_listed_is_the_commands_own_short_help_at_any_width() -> None:
    assert set(SUMMARIES) == set(COMMANDS)
    for group in lazy_groups(cli):
        ctx = click.Context(group)
        for name, summary in group.lazy_summaries.items():
            command = group.get_command(ctx, name)
            assert command is not None and not command.short_help and not command.deprecated
            stand_in = click.Command(name, help=summary)
            for limit in range(10, 200):
                assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit), (
                    name,
                    limit,
                )


def click_top_help(monkeypatch: pytest.MonkeyPatch, columns: int) -> str:
    """What the click group prints for ``feral --help`` on a terminal ``columns`` wide."""
    monkeypatch.setenv("COLUMNS", str(columns))
    ctx = cli.context_class(cli, info_name="feral", **cli.context_settings)
    return cli.get_help(ctx) + "\n"


def test_the_help_the_script_prints_without_click_is_what_click_renders(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """cli/fast_help.py keeps click's rendering as text: a changed option, summary or docstring
    changes click's, and this fails until the text is copied from its message."""
    rendered = click_top_help(monkeypatch, WIDTH)
    assert TOP_HELP == rendered, f"cli/fast_help.py's TOP_HELP should now be:\n{rendered}"


def run_script(*args: str, columns: int) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("feral")
    probe = (
        "import sys\n"
        f"sys.argv = [{str(script)!r}, *{list(args)!r}]\n"
        "from feral.cli.fast_help import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    print('click:' + str('click' in sys.modules), file=sys.stderr)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": str(columns)},
    )


def test_the_script_prints_the_top_help_without_importing_click() -> None:
    for flag in ("--help", "-h"):
        result = run_script(flag, columns=100)
        assert result.returncode == 0, result.stderr
        assert (result.stdout, result.stderr.strip()) == (TOP_HELP, "click:False")


def test_a_narrow_terminal_or_another_command_line_goes_to_click(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Below 80 columns click wraps narrower, so the kept text would be wrong there; and
    ``--help`` after anything else is a subcommand's help, or the group's with options."""
    narrow = run_script("--help", columns=60)
    assert narrow.stdout == click_top_help(monkeypatch, 60) != TOP_HELP
    assert narrow.stderr.strip().endswith("click:True")
    version = run_script("--version", columns=100)
    assert "version" in version.stdout and version.stderr.strip().endswith("click:True")
