"""``from feral import Memory`` (node/library/memory.py), and docs/PYTHON.md, whose examples run
here.

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


def test_the_assistant_methods_refuse_bad_arguments_and_secrets(tmp_path: Path) -> None:
    from feral import Memory
    from feral.node.secrets.scan import SecretRefused

    with Memory(tmp_path / "home", create=True) as memory:
        with pytest.raises(InvalidInput, match="role"):
            memory.append_message("chat", "robot", "hello")
        with pytest.raises(InvalidInput, match="content"):
            memory.append_message("chat", "user", "   ")
        with pytest.raises(SecretRefused):
            memory.append_message("chat", "user", "my password is hunter2-Zq8#xv!Lp")
        assert memory.session_messages("chat")["messages"] == []
        with pytest.raises(InvalidInput, match="max_tokens"):
            memory.digest(max_tokens=0)
        with pytest.raises(InvalidInput, match="scope"):
            memory.digest(scope="everyone")
        with pytest.raises(InvalidInput, match="latency_ms"):
            memory.log_tool_call("search", latency_ms=-1)
        with pytest.raises(InvalidInput, match="limit"):
            memory.tool_calls(limit=0)
        with pytest.raises(InvalidInput, match="importance"):
            memory.boost("x", 0)
        assert memory.tool_calls() == []


def test_closing_turns_what_is_left_of_each_session_into_an_episode(tmp_path: Path) -> None:
    from feral import Memory

    with Memory(tmp_path / "home", create=True) as memory:
        memory.append_message("a", "user", "I like figs.")
        memory.append_message("b", "user", "I like plums.")
        assert memory.list(tier="episodic") == []
    with Memory(tmp_path / "home") as memory:
        sessions = sorted(row["session_id"] for row in memory.list(tier="episodic"))
        assert sessions == ["a", "b"]
        assert memory.session_messages("a")["messages"] == []  # the buffers were this process's


def test_remember_keep_both_writes_a_new_value_beside_the_old(tmp_path: Path) -> None:
    from feral import Memory

    with Memory(tmp_path / "home", create=True) as memory:
        braga = memory.remember("I live in Braga")
        faro = memory.remember("I moved to Faro")
        assert faro["archived_rows"] == [braga["memory_id"]]
        both = memory.remember("I live in Porto", keep_both=True)
        assert both["archived_rows"] == [] and both["written"] is True
