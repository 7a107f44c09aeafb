"""Issue 11, finding 6: a clock that ran ahead and was then corrected must not wedge its node.

Real ``feral`` processes on loopback. A laptop writes while its clock is ahead (two hours; 400
days), then its clock is put right: it is told at once (a warning after each write, ``sync
status``, the serve log), and ``feral sync clock-reset`` brings its writes back to the clock,
keeping its identity and everything it wrote, after which the server receives them. The
``mesh`` fixture stops every server and checks that none logged a traceback.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from .servers import FeralNode, Mesh, pair, wait_until

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
RESET = "feral sync clock-reset"


def holds(node: FeralNode, text: str) -> bool:
    return any(row[0] == text for row in node.query("SELECT object FROM facts"))


def one_line(stream: str) -> str:
    lines = stream.strip().splitlines()
    assert len(lines) == 1, stream
    assert "Traceback" not in stream
    return lines[0]


def laptop_and_server(mesh: Mesh, ahead_ms: int) -> tuple[FeralNode, FeralNode]:
    server, laptop = mesh.add(
        "server", "laptop", env={"laptop": {"FERAL_CLOCK_OFFSET_MS": str(ahead_ms)}}
    )
    pair(server, laptop, dial=False)
    pair(laptop, server, dial=True)
    return server, laptop


def remember(node: FeralNode, text: str) -> subprocess.CompletedProcess[str]:
    return node.run("memory", "remember", text, check=False)


@pytest.mark.slow
def test_a_laptop_two_hours_ahead_then_fixed_is_warned_and_recovers_with_one_command(mesh: Mesh):
    server, laptop = laptop_and_server(mesh, 2 * HOUR_MS)
    mesh.start(server)
    assert remember(laptop, "the spare bulbs are in the hall cupboard").returncode == 0
    laptop.env.clear()  # the clock is put right

    written = remember(laptop, "the plumber comes on tuesday")
    assert written.returncode == 0, written.stderr
    warning = one_line(written.stderr)
    assert "ahead of its clock" in warning and RESET in warning, warning
    clock = laptop.status()["clock"]
    assert clock["ahead_ms"] > HOUR_MS and RESET in clock["warning"], clock
    assert "CLOCK" in laptop.run("sync", "status").stdout
    refused = laptop.run("sync", "now", check=False)
    assert refused.returncode == 1 and "clock skew" in refused.stderr, refused.stderr

    reset = laptop.run("sync", "clock-reset")
    assert "re-stamped 2 write(s)" in reset.stdout, reset.stdout
    assert laptop.status()["clock"]["warning"] is None
    again = remember(laptop, "the library books are due back in march")
    assert again.returncode == 0 and again.stderr == "", again.stderr
    laptop.run("sync", "now")
    for text in (
        "the spare bulbs are in the hall cupboard",
        "the plumber comes on tuesday",
        "the library books are due back in march",
    ):
        assert holds(server, text), text
    assert server.export() == laptop.export()
    assert server.peer_status(laptop)["node_id"] == laptop.node_id  # the same identity


@pytest.mark.slow
def test_a_laptop_400_days_ahead_then_fixed_names_the_recovery_and_loses_nothing(mesh: Mesh):
    server, laptop = laptop_and_server(mesh, 400 * DAY_MS)
    assert remember(laptop, "written 400 days ahead").returncode == 0
    laptop.env.clear()

    failed = remember(laptop, "written after the clock was fixed")
    assert failed.returncode == 1
    error = one_line(failed.stderr)
    assert RESET in error and "set back" not in error, error
    assert re.search(r"\b(399|400) d\b", error), error

    mesh.start(laptop)  # the serve log says so at once
    assert wait_until(lambda: RESET in laptop.serve_log(), 20), laptop.serve_log()
    laptop.stop()
    laptop.run("sync", "clock-reset")
    assert remember(laptop, "written after the reset").returncode == 0
    mesh.start(server)
    laptop.run("sync", "now")
    assert holds(server, "written 400 days ahead")
    assert holds(server, "written after the reset")
    assert server.export() == laptop.export()


@pytest.mark.slow
def test_clock_reset_refuses_when_a_peer_already_holds_the_writes_ahead(mesh: Mesh):
    server, laptop = mesh.add(
        "server",
        "laptop",
        env={
            "server": {"FERAL_CLOCK_OFFSET_MS": str(2 * HOUR_MS)},
            "laptop": {"FERAL_CLOCK_OFFSET_MS": str(2 * HOUR_MS)},
        },
    )
    pair(server, laptop, dial=False)
    pair(laptop, server, dial=True)
    mesh.start(server)
    assert remember(laptop, "written while both were two hours ahead").returncode == 0
    laptop.run("sync", "now")
    laptop.env.clear()

    refused = laptop.run("sync", "clock-reset", check=False)
    assert refused.returncode == 1
    error = one_line(refused.stderr)
    assert server.node_id[:8] in error and "already holds" in error, error
    assert "new identity" in error, error
    assert holds(laptop, "written while both were two hours ahead")


@pytest.mark.slow
def test_clock_reset_on_a_clock_that_is_not_ahead_changes_nothing(mesh: Mesh):
    (laptop,) = mesh.add("laptop")
    assert remember(laptop, "an ordinary write").returncode == 0
    before = laptop.export()
    done = laptop.run("sync", "clock-reset")
    assert "no write of this node is stamped ahead" in done.stdout, done.stdout
    assert laptop.export() == before
