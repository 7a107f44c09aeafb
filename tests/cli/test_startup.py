"""What a short command imports: `feral sync now`, `status` and `export` start in a fraction of
a second only if they skip the modules that serve, rank or embed (numpy, Starlette, uvicorn).

Each of those once crept back into the start-up through one module-level import; the
catch-up benchmark, which times a `sync now` launch, is where it showed.
"""

from __future__ import annotations

import subprocess
import sys

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
