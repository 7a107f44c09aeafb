"""A node whose database is replaced under the same identity (TEST-CATALOG 17).

A new or wiped database takes its own history back from its peers. A database restored from an
older copy, which then wrote again, holds its own stream of writes with a hole that version
vectors cannot describe; the log entry counts exchanged at the end of a round reveal it, and the
node takes that origin again from the start (docs/REPLICATION.md §5, "Holes").
"""

from __future__ import annotations

import shutil

import pytest

from feral.node.clock_mark import MARK_FILE, read_mark
from feral.node.node import DATABASE_FILE
from feral.node.serve.service import dial
from feral.sync.errors import HomeFileError

from .support import ManualClock, Mesh, assert_converged, now_ms


@pytest.fixture
async def mesh(tmp_path):
    mesh = Mesh(tmp_path)
    mesh.add("laptop", "server")
    mesh.pair("laptop", mesh.peer("server"))
    mesh.pair("server", mesh.peer("laptop", dial=False))
    yield mesh
    await mesh.aclose()


def drop_database(mesh: Mesh, name: str) -> None:
    for suffix in ("", "-wal", "-shm"):
        (mesh.home(name) / f"{DATABASE_FILE}{suffix}").unlink(missing_ok=True)


async def round_trip(laptop, server_peer):
    result = await dial(laptop, server_peer, until_quiet=True)
    return result


async def test_a_wiped_database_takes_its_own_history_back_and_writes_above_it(mesh):
    laptop = await mesh.open("laptop")
    server = await mesh.open("server")
    async with mesh.serve(server, "server"):
        for i in range(5):
            await laptop.remember(("laptop", "wrote", f"fact {i}"))
        assert (await round_trip(laptop, mesh.peer("server"))).error is None
        before = await server.export_lines()
        await laptop.close()
        drop_database(mesh, "laptop")
        laptop = await mesh.open("laptop")
        assert await laptop.export_lines() == []
        result = await round_trip(laptop, mesh.peer("server"))
        assert result.error is None, result.error
        await assert_converged(laptop, server)
        assert await server.export_lines() == before
        newest = max((await server.version_vector()).values())
        row = await laptop.remember(("laptop", "wrote", "after the wipe"))
        assert row["hlc"] > newest
        assert (await round_trip(laptop, mesh.peer("server"))).error is None
        await assert_converged(laptop, server)


async def test_a_database_restored_from_an_older_copy_finds_its_hole_and_converges(mesh):
    laptop = await mesh.open("laptop")
    server = await mesh.open("server")
    async with mesh.serve(server, "server"):
        await laptop.remember(("laptop", "wrote", "before the backup"))
        assert (await round_trip(laptop, mesh.peer("server"))).error is None
        await laptop.close()
        backup = mesh.root / "backup.db"
        shutil.copy(mesh.home("laptop") / DATABASE_FILE, backup)
        laptop = await mesh.open("laptop")
        await laptop.remember(("laptop", "wrote", "after the backup"))
        assert (await round_trip(laptop, mesh.peer("server"))).error is None
        await laptop.close()
        drop_database(mesh, "laptop")
        shutil.copy(backup, mesh.home("laptop") / DATABASE_FILE)
        laptop = await mesh.open("laptop")
        await laptop.remember(("laptop", "wrote", "after the restore"))
        result = await round_trip(laptop, mesh.peer("server"))  # one round finds and repairs it
        assert result.error is None, result.error
        await assert_converged(laptop, server)
        exported = "".join(await laptop.export_lines())
        assert '"after the backup"' in exported
        assert '"after the restore"' in exported


async def test_a_restored_database_writes_above_every_stamp_it_lost_even_with_a_frozen_clock(
    mesh,
):
    """The lost write and the next one would share ``(origin, hlc)`` if the clock resumed from
    the copy's mark: the mark kept beside the database lifts it above both."""
    frozen = ManualClock(now_ms())
    laptop = await mesh.open("laptop", now_ms=frozen)
    await laptop.remember(("laptop", "wrote", "before the backup"))
    await laptop.close()
    backup = mesh.root / "backup.db"
    shutil.copy(mesh.home("laptop") / DATABASE_FILE, backup)
    laptop = await mesh.open("laptop", now_ms=frozen)
    lost = await laptop.remember(("laptop", "wrote", "after the backup"))
    await laptop.close()
    drop_database(mesh, "laptop")
    shutil.copy(backup, mesh.home("laptop") / DATABASE_FILE)

    laptop = await mesh.open("laptop", now_ms=frozen)
    assert "after the backup" not in "".join(await laptop.export_lines())
    row = await laptop.remember(("laptop", "wrote", "after the restore"))
    assert row["hlc"] > lost["hlc"]
    assert read_mark(mesh.home("laptop")) == row["hlc"]


async def test_a_damaged_clock_mark_is_refused_by_name_and_the_database_is_untouched(mesh):
    laptop = await mesh.open("laptop")
    await laptop.remember(("laptop", "wrote", "a fact"))
    before = await laptop.export_lines()
    await laptop.close()
    (mesh.home("laptop") / MARK_FILE).write_text("twelve o'clock\n")

    with pytest.raises(HomeFileError, match=r"clock.*not a clock mark"):
        await mesh.open("laptop")
    (mesh.home("laptop") / MARK_FILE).unlink()
    laptop = await mesh.open("laptop")
    assert await laptop.export_lines() == before
