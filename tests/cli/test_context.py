"""The helpers every command shares (cli/context.py) and the shape of the cli package."""

from __future__ import annotations

import ast
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from feral.cli.context import EXIT_STATUS, FeralGroup, exit_status
from feral.cli.main import cli
from feral.sync.errors import FeralError, InvalidArgument, InvalidInput
from tests.error_kinds import a_raised, every_feral_error

CLI = Path(__file__).resolve().parents[2] / "cli"


def group_raising(error: FeralError) -> click.Group:
    """A group built as ``feral`` is, with one subcommand that fails with ``error``."""

    @click.group(cls=FeralGroup)
    def group() -> None:
        pass

    @group.group()
    def inner() -> None:
        pass

    @inner.command()
    def fails() -> None:
        raise error

    return group


EXIT_STATUS_OF = {
    "FeralError": 1,
    "DecodeError": 1,
    "ProtocolError": 1,
    "SchemaError": 1,
    "ClockError": 1,
    "ClockSkewError": 1,
    "AuthError": 1,
    "ConfigError": 1,
    "InvalidArgument": 2,  # a usage error
    "InvalidInput": 1,
    "SecretRefused": 1,
    "NotAvailable": 1,
    "NotFoundError": 1,
    "PathRefused": 1,
    "HomeFileError": 1,
    "ServeRefusal": 1,
    "StorageError": 1,
    "MigrationError": 1,
    "ModelUnavailable": 1,
    "CorruptDatabase": 1,
    "NewerDatabase": 1,
    "EmbeddingError": 1,
}
"""Each kind's exit status (DESIGN §6: 2 a usage error, 1 any other refusal), written down
kind by kind so a kind added to the tree fails the tests until its status is decided."""


def test_every_kind_in_the_tree_has_its_exit_status_written_down():
    assert sorted(kind.__name__ for kind in every_feral_error()) == sorted(EXIT_STATUS_OF)


@pytest.mark.parametrize("kind", every_feral_error(), ids=lambda kind: kind.__name__)
def test_a_feral_error_leaving_a_command_is_one_line_and_its_kinds_exit_status(
    kind: type[FeralError],
):
    error = a_raised(kind, f"a {kind.__name__} happened")
    result = CliRunner().invoke(group_raising(error), ["inner", "fails"], catch_exceptions=False)
    assert result.exit_code == exit_status(kind) == EXIT_STATUS_OF[kind.__name__]
    assert result.stderr == f"Error: a {kind.__name__} happened\n"
    assert result.stdout == ""


def test_the_table_holds_a_kind_only_where_its_exit_status_differs_from_its_parents():
    """One place per fact: a kind that exits as its parent does has no row and inherits it."""
    assert FeralError in EXIT_STATUS
    for kind, status in EXIT_STATUS.items():
        if kind is not FeralError:
            assert status != exit_status(kind.__mro__[1]), kind.__name__


def test_a_kind_without_a_row_exits_as_its_nearest_ancestor_with_one():
    class WrongFlag(InvalidArgument):
        """A kind no table names (declared by this test)."""

    assert WrongFlag not in EXIT_STATUS
    result = CliRunner().invoke(
        group_raising(WrongFlag("--x is not an option")), ["inner", "fails"]
    )
    assert result.exit_code == 2


def test_a_message_over_several_lines_still_prints_as_one():
    error = InvalidInput("line 1: bad\nsee the manual")
    result = CliRunner().invoke(group_raising(error), ["inner", "fails"], catch_exceptions=False)
    assert result.stderr == "Error: line 1: bad see the manual\n"


def test_the_feral_group_is_the_one_that_maps_errors():
    assert isinstance(cli, FeralGroup)


def module_of(path: Path) -> str:
    """``cli/memory/memory_commands.py`` → ``feral.cli.memory.memory_commands``."""
    return ".".join(["feral.cli", *path.relative_to(CLI).with_suffix("").parts])


def imported_modules(path: Path) -> set[str]:
    """The modules ``path`` imports, relative imports resolved within its package."""
    names: set[str] = set()
    package = module_of(path).rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            up = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = (".".join(up) + "." if node.level else "") + (node.module or "")
            names.add(base.rstrip("."))
            names.update(f"{base}.{alias.name}".replace("..", ".") for alias in node.names)
    return names


ENTRY_POINTS = ("__main__.py", "fast_help.py")
"""`python -m feral.cli` and the console script: they run main's group, nothing imports them."""


def test_no_module_imports_cli_main_so_there_is_no_cycle():
    for path in sorted(CLI.rglob("*.py")):
        if path.name in ENTRY_POINTS:
            assert module_of(path) not in {
                name for other in CLI.rglob("*.py") for name in imported_modules(other)
            }, path.name
        else:
            assert "feral.cli.main" not in imported_modules(path), path.name


def test_main_names_the_command_modules_and_imports_none_of_them():
    """The groups are lazy (cli/lazy_group.py): main.py imports only what builds the group,
    so ``feral --help`` and every command load just the modules they use."""
    tree = ast.parse((CLI / "main.py").read_text(encoding="utf-8"))
    top = {name for name in imported_modules(CLI / "main.py") if name.startswith("feral.cli.")}
    assert top <= {
        "feral.cli.context",
        "feral.cli.context.pass_home",
        "feral.cli.examples",  # the examples' table, light
        "feral.cli.examples.add_examples",
        "feral.cli.home",  # the --home option and check, light
        "feral.cli.home.HOME_HELP",
        "feral.cli.home.accept_home_everywhere",
        "feral.cli.lazy_group",
        "feral.cli.lazy_group.LazyFeralGroup",
    }, top
    assert any(isinstance(n, ast.Assign) for n in tree.body)  # the COMMANDS map


def test_only_the_shared_flag_spells_out_the_json_option():
    spelled = [p.name for p in sorted(CLI.rglob("*.py")) if '"--json"' in p.read_text("utf-8")]
    assert spelled == ["output.py"]


def every_command(group: click.Group, prefix: str = "feral") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):  # lazy groups (cli/lazy_group.py) load on get_command
        command = group.get_command(ctx, name)
        assert command is not None, name
        found.append((f"{prefix} {name}", command))
        if isinstance(command, click.Group):
            found.extend(every_command(command, f"{prefix} {name}"))
    return found


def test_every_json_flag_reads_the_same():
    flags = [
        (name, param)
        for name, command in every_command(cli)
        for param in command.params
        if "--json" in getattr(param, "opts", ())
    ]
    assert len(flags) >= 13
    for name, param in flags:
        assert isinstance(param, click.Option) and param.is_flag, name
        assert param.name == "as_json", name
        assert param.help is not None and param.help.startswith("Print "), name
        assert param.help.endswith(" as JSON."), name


def test_a_drain_that_fails_after_a_write_leaves_the_write_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from feral.node.node import Node
    from feral.storage.db.errors import StorageError

    async def refused(self: Node, progress: object = None) -> int:
        raise StorageError("database is locked")

    home = tmp_path / "home"
    assert CliRunner().invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    monkeypatch.setattr(Node, "embed_queued", refused)
    # An import, not remember: remember stores its row's vector with the write
    # (node/absorb/pipeline.py).
    lines = tmp_path / "facts.txt"
    lines.write_text("I live in Porto\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--home", str(home), "memory", "import", str(lines)])
    assert result.exit_code == 0, result.output
    assert "embedding postponed, rows stay queued: database is locked" in result.stderr
    monkeypatch.undo()
    stats = CliRunner().invoke(cli, ["--home", str(home), "memory", "stats", "--json"])
    assert '"embed_pending": 1' in stats.stdout  # still queued: the next drain embeds it
