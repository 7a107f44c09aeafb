"""``from feral import Memory`` (node/memory_api.py), and docs/PYTHON.md, whose examples run here.

Each ```python block of the document runs on its own, in a fresh temporary home named ``HOME``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from feral.sync.errors import InvalidInput, NotFoundError

DOC = Path(__file__).resolve().parent.parent / "docs" / "PYTHON.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)


def test_the_document_has_examples() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("number", range(len(BLOCKS)))
def test_each_example_in_the_document_runs(number: int, tmp_path: Path) -> None:
    code = compile(BLOCKS[number], f"{DOC.name} example {number + 1}", "exec")
    exec(code, {"HOME": tmp_path / "home", "__name__": "example"})


def test_importing_feral_loads_no_store_no_server_no_model() -> None:
    probe = (
        "import sys, feral\n"
        "assert feral.Memory.__name__ == 'Memory'\n"
        "heavy = ('numpy', 'starlette', 'onnxruntime', 'mcp', 'uvicorn')\n"
        "print(','.join(sorted(m for m in heavy if m in sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_a_missing_home_is_an_error_and_nothing_is_created(tmp_path: Path) -> None:
    from feral import Memory

    with pytest.raises(NotFoundError, match="no feral home at .*; run `feral init`"):
        Memory(tmp_path / "missing")
    assert not (tmp_path / "missing").exists()


def test_calls_after_close_and_bad_arguments_are_clear_errors(tmp_path: Path) -> None:
    from feral import Memory

    memory = Memory(tmp_path / "home", create=True)
    with pytest.raises(InvalidInput, match="together"):
        memory.remember("a text", subject="user")
    with pytest.raises(InvalidInput, match="follow must be one of"):
        memory.get("x", follow="all")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="limit"):
        memory.list(limit=0)
    with pytest.raises(NotFoundError):
        memory.forget("no-such-memory")
    memory.close()
    memory.close()  # a second close is harmless
    with pytest.raises(Exception, match="closed"):
        memory.search("x")


async def test_it_works_where_an_event_loop_already_runs(tmp_path: Path) -> None:
    from feral import Memory

    with Memory(tmp_path / "home", create=True) as memory:
        stored = memory.remember("I live in Braga")
        assert memory.search("Braga")["results"][0]["id"] == stored["memory_id"]
