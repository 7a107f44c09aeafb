"""What ``pip install .`` puts on a machine: one package, ``feral``, and nothing generic.

The folders node/ sync/ storage/ cli/ sit at the repository root, but a top-level ``storage`` or
``cli`` in site-packages would clash with any other distribution that ships one (pip does not
detect clashing files: the last install silently wins). pyproject.toml maps them beneath
``feral``; these tests build the wheel from the checkout's files and install it as pip would.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import feral

ROOT = Path(__file__).resolve().parent.parent

BUILD_TIMEOUT_S = 600


def checkout_files() -> list[str]:
    """The files a clean clone of this checkout holds (tracked, or new and not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [name for name in listed.stdout.splitlines() if (ROOT / name).is_file()]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built, as pip builds one, from a copy of the checkout's files only."""
    if shutil.which("git") is None:
        pytest.fail("git is needed to tell the checkout's files from build leftovers")
    source = tmp_path_factory.mktemp("clean") / "feral"
    for name in checkout_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(source)],
        check=True, timeout=BUILD_TIMEOUT_S, capture_output=True,
    )  # fmt: skip
    (built,) = out.glob("feral-*.whl")
    return built


def top_level_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return {name.split("/")[0] for name in archive.namelist()}


@pytest.mark.slow
def test_the_wheel_holds_only_the_feral_package_and_its_metadata(wheel):
    assert top_level_names(wheel) == {"feral", f"feral-{feral.__version__}.dist-info"}


@pytest.mark.slow
def test_the_wheel_carries_the_type_marker_and_the_shipped_models_but_not_their_makers(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert "feral/py.typed" in names
    assert "feral/storage/encoders/models/minilm-static-256/embeddings.npy" in names
    for name in ("model.onnx", "tokenizer.json", "config.json", "LICENSE", "NOTICE"):
        assert f"feral/storage/encoders/models/minilm-l6-int8/{name}" in names
    makers = ("distill.py", "export_minilm.py")
    assert not [n for n in names if n.endswith(makers) or "__pycache__" in n]
    assert not [n for n in names if n.startswith("feral/node/root")]


@pytest.mark.slow
def test_the_console_script_runs_the_feral_package(wheel):
    with zipfile.ZipFile(wheel) as archive:
        (entry_points,) = [n for n in archive.namelist() if n.endswith("entry_points.txt")]
        text = archive.read(entry_points).decode()
    assert "feral = feral.cli.fast_help:main" in text


def other_distribution(directory: Path) -> Path:
    """A wheel of someone else's project with top-level ``storage`` and ``cli`` packages."""
    files = {
        "storage/__init__.py": b'OWNER = "storage-tools"\n',
        "cli/__init__.py": b'OWNER = "storage-tools"\n',
        "storage_tools-1.0.dist-info/METADATA": (
            b"Metadata-Version: 2.1\nName: storage-tools\nVersion: 1.0\n"
        ),
        "storage_tools-1.0.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = [f"{name},sha256={_digest(data)},{len(data)}" for name, data in files.items()]
    record.append("storage_tools-1.0.dist-info/RECORD,,")
    path = directory / "storage_tools-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr("storage_tools-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return path


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


@pytest.fixture
def installed_beside(wheel: Path, tmp_path: Path) -> Iterator[Path]:
    """Both wheels installed by pip into one fresh site directory, ours first."""
    target = tmp_path / "site"
    for each in (wheel, other_distribution(tmp_path)):
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
             "--target", str(target), str(each)],
            check=True, timeout=BUILD_TIMEOUT_S, capture_output=True,
        )  # fmt: skip
    yield target


def run_python(code: str, cwd: Path, site: Path | None = None) -> str:
    """``python -c code`` in ``cwd``, with ``site`` first on the path; its stdout."""
    env = {**os.environ, "PYTHONPATH": str(site) if site else ""}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.slow
def test_a_distribution_with_a_top_level_storage_package_and_feral_both_import(
    installed_beside, tmp_path
):
    code = (
        "import storage, cli, feral, feral.storage.store, feral.cli.main\n"
        f"assert feral.__file__.startswith({str(installed_beside)!r}), feral.__file__\n"
        "print(storage.OWNER, cli.OWNER, feral.__version__)\n"
    )
    assert run_python(code, tmp_path, installed_beside) == (
        f"storage-tools storage-tools {feral.__version__}"
    )


def test_a_sync_module_in_the_working_directory_does_not_shadow_feral(tmp_path):
    (tmp_path / "sync.py").write_text("raise SystemExit('the wrong sync was imported')\n")
    (tmp_path / "storage").mkdir()
    (tmp_path / "storage" / "__init__.py").write_text("raise SystemExit('the wrong storage')\n")
    code = "import feral, feral.node, feral.sync.hlc, feral.storage.store; print(feral.__version__)"
    assert run_python(code, tmp_path) == feral.__version__


def test_the_version_is_written_once():
    assert importlib.metadata.version("feral") == feral.__version__
