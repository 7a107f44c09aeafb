"""Issue 11, finding 5: a clock skew passed on through a relay must not stall a correct device.

Real ``feral serve`` and ``feral sync now`` processes on loopback. The laptop's clock is four
minutes fast and the phone's four minutes slow; the home server's is right, so each device is
within the five-minute window of the server it links to (the laptop and the phone never link).
The ``mesh`` fixture stops every server and checks that none logged a traceback.
"""

from __future__ import annotations

import subprocess

import pytest

from .servers import FeralNode, Mesh, pair

MINUTE_MS = 60_000


def holds(node: FeralNode, text: str) -> bool:
    return any(row[0] == text for row in node.query("SELECT object FROM facts"))


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def skewed_mesh(mesh: Mesh, laptop_ms: int, phone_ms: int) -> tuple[FeralNode, ...]:
    """A home server with the right time, a laptop and a phone skewed as given."""
    server, laptop, phone = mesh.add(
        "server",
        "laptop",
        "phone",
        env={
            "laptop": {"FERAL_CLOCK_OFFSET_MS": str(laptop_ms)},
            "phone": {"FERAL_CLOCK_OFFSET_MS": str(phone_ms)},
        },
    )
    for device in (laptop, phone):
        pair(server, device, dial=False)
        pair(device, server, dial=True)
    return server, laptop, phone


@pytest.mark.slow
def test_a_fast_laptop_does_not_cut_a_slow_phone_off_from_the_servers_own_writes(mesh: Mesh):
    server, laptop, phone = skewed_mesh(mesh, 4 * MINUTE_MS, -4 * MINUTE_MS)
    mesh.start(server)
    laptop.cli("memory", "remember", "the laptop noted the bike lock is blue")
    laptop.run("sync", "now")
    # The server's own writes come after the laptop's, which it holds: they must still follow
    # the server's clock, not the laptop's.
    server.cli("memory", "remember", "the server noted the backups run nightly")
    laptop.cli("memory", "remember", "the laptop noted the kettle needs descaling")
    laptop.run("sync", "now")
    server.cli("memory", "remember", "the server noted the router restarts on sundays")

    result = phone.run("sync", "now", check=False)
    assert result.returncode == 0, result.stderr
    for text in (
        "the server noted the backups run nightly",
        "the server noted the router restarts on sundays",
    ):
        assert holds(phone, text), f"the phone lacks the server's own write {text!r}"
    # Relayed: the laptop's stamps are eight minutes ahead of the phone's clock, inside twice
    # the window (the laptop is within the window of the server, the server of the phone).
    assert holds(phone, "the laptop noted the kettle needs descaling")
    assert phone.peer_status(server)["last_error"] is None
    phone.cli("memory", "remember", "the phone noted the parking permit expires in june")
    phone.run("sync", "now")
    laptop.run("sync", "now")
    assert holds(laptop, "the phone noted the parking permit expires in june")
    assert laptop.export() == phone.export() == server.export()


@pytest.mark.slow
def test_a_refused_relayed_stamp_names_the_device_that_wrote_it_not_the_relay(mesh: Mesh):
    # Nine minutes: beyond one window of the server's clock, within twice the window less the
    # margin a sender keeps (docs/REPLICATION.md §7), so the server takes them once the laptop's
    # clock is put right, and holds them back from the phone, thirteen minutes behind.
    server, laptop, phone = skewed_mesh(mesh, 9 * MINUTE_MS, -4 * MINUTE_MS)
    mesh.start(server)
    laptop.cli("memory", "remember", "written while the laptop was nine minutes fast")
    laptop.env["FERAL_CLOCK_OFFSET_MS"] = str(4 * MINUTE_MS)  # now within the server's window
    laptop.run("sync", "now")
    assert holds(server, "written while the laptop was nine minutes fast")

    error = one_line_error(phone.run("sync", "now", check=False))
    assert "clock skew" in error, error
    assert laptop.node_id[:8] in error, error
    assert "relayed by" in error and server.node_id[:8] in error, error
    assert "12 min" in error, error  # thirteen minutes less the seconds the test took
    assert not holds(phone, "written while the laptop was nine minutes fast")
