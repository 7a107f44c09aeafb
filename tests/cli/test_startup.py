"""What a short command imports: `feral sync now`, `status` and `export` start in a fraction of
a second only if they skip the modules that serve, rank or embed (numpy, Starlette, uvicorn).

Each of those once crept back into the start-up through one module-level import; the
catch-up benchmark, which times a `sync now` launch, is where it showed. The same holds for
what a command that reads never uses: the tokenizer, the secret scanner's patterns, the node's
writing features (checked by running the command in a fresh interpreter); and for ``feral
init``, which needs neither the node nor the store.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import init_home, loaded_after

HEAVY = ("numpy", "starlette", "uvicorn", "onnxruntime")

PROBE = """
import sys
import feral.cli.main
import feral.node.links.dial
from feral.node.node import Node
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print(",".join(heavy))
"""


def test_the_cli_and_the_dialler_import_no_server_no_numpy_and_no_model_runtime() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "", f"imported at start-up: {result.stdout.strip()}"


NOT_FOR_READS = (
    "tokenizers",
    "feral.node.secrets.scan",
    "feral.node.absorb.pipeline",
    "feral.node.assistant.sessions",
    "feral.node.curation.actions",
    "feral.node.recall.search",
    "feral.node.curation.prompt_files",
)
"""What a command that only reads the store has no use for: the tokenizer (read on the first
text embedded), the secret scanner (on the first text written), and the features of the node
that write, talk or search."""


NOT_FOR_LISTS = ("tokenizers", "feral.node.secrets.scan")
"""What ``memory list`` and ``stats`` have no use for, though they load curation's actions."""


@pytest.mark.parametrize(
    ("command", "unused"),
    [
        (("sync", "status"), NOT_FOR_READS),
        (("memory", "export"), NOT_FOR_READS),
        (("memory", "list"), NOT_FOR_LISTS),
        (("memory", "stats"), NOT_FOR_LISTS),
        (("sync", "invite", "--url", "ws://127.0.0.1:9/sync"), ("websockets", "tokenizers")),
    ],
)
def test_a_command_skips_the_modules_it_has_no_use_for(
    tmp_path: Path, command: tuple[str, ...], unused: tuple[str, ...]
) -> None:
    home = init_home(tmp_path / "home")  # the default embedder: its model files are checked
    _, loaded = loaded_after(["--home", str(home), *command], unused)
    assert loaded == "", f"feral {' '.join(command)} imported {loaded}"


def test_init_makes_a_home_without_importing_the_node_or_the_store(tmp_path: Path) -> None:
    """``feral init`` writes a key and the settings: the store is made by the first command
    that opens the node."""
    node_and_store = ("feral.node.node", "feral.storage.store")
    _, loaded = loaded_after(["--home", str(tmp_path / "home"), "init"], node_and_store)
    assert loaded == "", f"feral init imported {loaded}"
    assert (tmp_path / "home" / "settings.json").is_file()


def test_the_dialler_loads_no_certificate_code_until_a_link_is_secure() -> None:
    """A ``ws://`` peer (a loopback one, or one allowed in plain text) needs no X.509: the
    certificate code is imported by what builds, reads or pins a certificate."""
    probe = "import sys, feral.node.links.dial; print('cryptography.x509' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == "False"
