"""Running ``feral`` as users do: in-process with CliRunner, or as a real process."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from click.testing import CliRunner, Result

from feral.cli.main import cli
from feral.node.settings.config import load_settings, save_settings


def set_embedder(home: Path, name: str) -> None:
    """Set ``memory.embedder`` in ``home``'s settings.json (running ``feral init`` first on a
    folder that holds no node yet: no other command makes one)."""
    if not (home / "node.key").exists():
        init_home(home)
    settings = load_settings(home)
    memory = dataclasses.replace(settings.memory, embedder=name)
    save_settings(home, dataclasses.replace(settings, memory=memory))


def turn_off_embeddings(home: Path) -> None:
    """Set ``memory.embedder`` to ``"none"`` in ``home``'s settings.json: no vector search."""
    set_embedder(home, "none")


def exported_facts(objects: Iterable[str], subject: str = "user") -> str:
    """Lines for ``feral memory import`` shaped as an export's facts (``subject`` / ``note`` /
    each of ``objects``): import writes those as they were, without the absorb pipeline, so a
    test that only needs many log entries does not spend its time classifying look-alike lines
    (``feral memory import --help``)."""
    row = {"table": "facts", "hlc": "", "origin": "", "subject": subject, "predicate": "note"}
    return "".join(json.dumps({**row, "object": text}) + "\n" for text in objects)


def feral(home: Path, *args: str, input: str | None = None) -> Result:
    """Invoke the CLI in-process (exceptions propagate, so a traceback fails the test)."""
    runner = CliRunner()
    return runner.invoke(cli, ["--home", str(home), *args], input=input, catch_exceptions=False)


def init_home(home: Path) -> Path:
    """``feral init`` on ``home`` (no other command makes a home) and hand it back."""
    result = feral(home, "init")
    assert result.exit_code == 0, result.output
    return home


def feral_json(home: Path, *args: str) -> object:
    result = feral(home, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def feral_command() -> list[str]:
    """The ``feral`` script beside this Python, else ``python -m feral.cli``.

    Never a ``feral`` found elsewhere on ``PATH``: that could be another install. This Python
    imports the same ``feral`` as the in-process tests (tests/checkout.py checks it is this
    checkout), so the processes run the code under test.
    """
    script = Path(sys.executable).parent / "feral"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "feral.cli"]


def feral_process(home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``feral`` as a separate process, as a user's shell would."""
    env = {**os.environ, "FERAL_HOME": str(home)}
    return subprocess.run(
        [*feral_command(), *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def holds_digits(text: str, digits: str) -> bool:
    """Whether ``digits`` (a PIN, say) stand in ``text`` by themselves: not as part of a longer
    number or hex run (a clock reading, a timestamp, an id), where any four digits turn up by
    chance now and then."""
    return re.search(rf"(?<![0-9a-fA-F]){re.escape(digits)}(?![0-9a-fA-F])", text) is not None


_IMPORT_PROBE = """
import sys
from feral.cli.main import cli
try:
    cli({argv!r}, prog_name="feral")
except SystemExit as exc:
    assert not exc.code, exc.code
print("loaded:" + ",".join(sorted(m for m in {modules!r} if m in sys.modules)), file=sys.stderr)
"""


def loaded_after(argv: list[str], modules: tuple[str, ...]) -> tuple[str, str]:
    """Run the ``feral`` group on ``argv`` in a fresh interpreter: (its output, which of
    ``modules`` were imported when it ended)."""
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE.format(argv=argv, modules=modules)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return result.stdout, result.stderr.splitlines()[-1].removeprefix("loaded:")
