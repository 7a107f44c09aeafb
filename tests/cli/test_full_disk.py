"""Issue 11, finding 9: a full disk, with real ``feral`` processes on a small filesystem.

The home lives on a tmpfs of a few MiB mounted for the test and filled with one file. Writes
must fail with one line and exit 1, reads must still work (the user can rescue their data),
nothing may be half-written, and sync must resume once space is back. Mounting needs root (or
CAP_SYS_ADMIN); without it the test is skipped and says so.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlean

from .servers import FeralNode, Mesh, free_port, pair

DISK_SIZE = "16m"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A freshly mounted tmpfs of :data:`DISK_SIZE`, unmounted on the way out."""
    mount = tmp_path / "disk"
    mount.mkdir()
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={DISK_SIZE},mode=0700", "tmpfs", str(mount)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except FileNotFoundError:
        pytest.skip("no mount command here: cannot make a small filesystem to fill")
    if done.returncode != 0:
        pytest.skip(
            "a small filesystem to fill needs permission to mount a tmpfs (root or "
            f"CAP_SYS_ADMIN): {done.stderr.strip()}"
        )
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=30)


def fill(disk: Path) -> Path:
    """Write one file until the filesystem refuses another byte; returns it."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65_536, 1):
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * size):
                    pass
    finally:
        os.close(fd)
    assert os.statvfs(disk).f_bavail == 0, "the small filesystem did not fill"
    return filler


def assert_one_line_failure(result: subprocess.CompletedProcess[str], what: str) -> None:
    assert result.returncode == 1, f"{what}: exit {result.returncode}: {result.stderr}"
    assert "Traceback" not in result.stderr, f"{what}: {result.stderr}"
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and errors[0] == result.stderr.strip().splitlines()[-1], (
        f"{what}: {result.stderr}"
    )
    assert "full" in errors[0], f"{what}: the error does not say the disk is full: {errors[0]}"


def devices(tmp_path: Path, disk: Path) -> tuple[Mesh, FeralNode, FeralNode]:
    """A peer on the ordinary disk, serving, and a device whose home is on the small disk."""
    mesh = Mesh(tmp_path / "mesh")
    (peer,) = mesh.add("peer")
    full = FeralNode("full", disk / "home", free_port(), mesh.logs)
    full.node_id = full.cli("init", "--name", "full").strip()
    mesh.nodes.append(full)
    pair(full, peer, dial=True)
    pair(peer, full, dial=False)
    return mesh, peer, full


@pytest.mark.slow
@pytest.mark.parametrize("held_open", [False, True], ids=["closed", "held-open"])
def test_a_full_disk_gives_one_line_errors_keeps_reads_and_sync_resumes(
    tmp_path: Path, small_disk: Path, held_open: bool
) -> None:
    """``held_open``: another connection keeps the database open, so its WAL and shared-memory
    files exist when the disk fills (as while ``feral serve`` runs); otherwise they must be
    created by the next command to open it."""
    mesh, peer, full = devices(tmp_path, small_disk)
    with mesh, contextlib.ExitStack() as stack:
        full.cli("memory", "remember", "my doctor is Dr. Chen")
        if held_open:
            holder = stack.enter_context(contextlib.closing(sqlean.connect(str(full.database))))
            holder.execute("SELECT count(*) FROM facts").fetchall()
        for n in range(20):
            peer.cli("memory", "remember", f"peer fact number {n} " + "x" * 2_000)
        mesh.start(peer)
        before = full.export()
        facts = tmp_path / "facts.txt"
        facts.write_text("".join(f"imported fact {n} " + "y" * 500 + "\n" for n in range(3_000)))
        filler = fill(small_disk)

        for args in (
            ("memory", "remember", "a new fact " + "z" * 30_000),
            ("memory", "import", str(facts)),
            ("sync", "now"),
        ):
            assert_one_line_failure(full.run(*args, check=False), " ".join(args[:2]))
        assert full.export() == before, "a failed write left something behind"
        assert full.json("sync", "status")["node_id"] == full.node_id
        found = full.json("memory", "search", "doctor", "--strategy", "fts")
        assert any("Chen" in r["content"] for r in found["results"]), found

        filler.unlink()
        full.run("sync", "now")
        full.run("memory", "remember", "space is back")
        full.run("sync", "now")
        assert full.export() == peer.export()
        assert full.query("PRAGMA integrity_check") == [("ok",)]
