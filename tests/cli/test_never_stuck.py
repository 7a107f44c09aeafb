"""Links that never get stuck, with real ``feral serve`` processes on loopback.

Each test is named after the fault it reproduces: a link's bookkeeping write failing under a
lock held by another process, and a ``feral sync now`` run beside a device's own server. The
``mesh`` fixture stops every server and checks that none logged a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlean

from .servers import FeralNode, Mesh, pair, wait_until

LINK_UP_S = 30.0
LIVE_PUSH_S = 10.0
"""Well before the minute's anti-entropy: a write that takes longer did not come by live push."""


def holds(node: FeralNode, text: str) -> bool:
    """Whether ``node``'s database holds a fact whose object is ``text`` (a short read)."""
    conn = sqlean.connect(str(node.database), timeout=5)
    try:
        row = conn.execute("SELECT 1 FROM facts WHERE object = ?", (text,)).fetchone()
        return row is not None
    finally:
        conn.close()


def linked(writer: FeralNode, reader: FeralNode, text: str) -> Callable[[], bool]:
    """Write ``text`` on ``writer`` (its own process) and say how to tell it reached ``reader``."""
    writer.run("memory", "remember", text)
    return lambda: holds(reader, text)


def links_between(*nodes: FeralNode) -> int:
    """Open TCP connections accepted on these nodes' ports, as the kernel lists them.

    Each link is one connection, so this counts links without asking the nodes themselves.
    """
    table = Path("/proc/net/tcp")
    if not table.exists():
        pytest.skip("needs /proc/net/tcp to count connections")
    ports = {node.port for node in nodes}
    established = "01"
    count = 0
    for line in table.read_text().splitlines()[1:]:
        fields = line.split()
        local_port = int(fields[1].rsplit(":", 1)[1], 16)
        count += fields[3] == established and local_port in ports
    return count


@pytest.mark.slow
@pytest.mark.parametrize("locked", ["dialler", "accepter"])
def test_a_links_dialer_survives_a_failed_write_and_sync_resumes_by_itself(
    mesh: Mesh, locked: str
) -> None:
    laptop, server = mesh.add("laptop", "server")
    pair(laptop, server, dial=True)
    pair(server, laptop, dial=False)
    mesh.start(laptop, server)
    assert wait_until(linked(server, laptop, "warm-up from the server"), LINK_UP_S), "no link"
    victim, writer = (laptop, server) if locked == "dialler" else (server, laptop)

    # Another process holds the victim's write lock past the busy timeout (5 s), as a long
    # import does: the link's next write there (applying the other side's push) fails.
    locker = sqlean.connect(str(victim.database), timeout=5, isolation_level=None)
    try:
        locker.execute("BEGIN IMMEDIATE")
        writer.run("memory", "remember", "written while the other side is locked")
        failed = wait_until(lambda: "database is locked" in victim.serve_log(), 60)
        assert failed, f"the link's write never failed: {victim.serve_log()}"
    finally:
        locker.execute("ROLLBACK")
        locker.close()

    after = linked(writer, victim, "written after the lock is gone")
    assert wait_until(after, 90), f"sync did not resume: {victim.serve_log()}"
    assert holds(victim, "written while the other side is locked")
    lines = [line for line in victim.serve_log().splitlines() if "database is locked" in line]
    assert len(lines) == 1, lines
    assert laptop.serving and server.serving


@pytest.mark.slow
def test_sync_now_beside_a_running_serve_keeps_live_pushes_flowing(mesh: Mesh) -> None:
    laptop, server = mesh.add("laptop", "server")
    pair(laptop, server, dial=True)
    pair(server, laptop, dial=True)
    mesh.start(laptop, server)
    assert wait_until(linked(server, laptop, "warm-up from the server"), LINK_UP_S), "no link"
    assert wait_until(linked(laptop, server, "warm-up from the laptop"), LINK_UP_S), "no link"
    assert wait_until(lambda: links_between(laptop, server) == 1, LINK_UP_S), (
        f"{links_between(laptop, server)} links between one pair"
    )

    (outcome,) = json.loads(laptop.run("sync", "now", "--json").stdout)
    assert outcome["ok"], outcome

    after = linked(server, laptop, "written on the server after the laptop's sync now")
    assert wait_until(after, LIVE_PUSH_S, interval=0.05), "the live push never came"

    def truthful() -> bool:
        mine, theirs = laptop.status(), server.status()
        row = next(p for p in mine["peers"] if p["node_id"] == server.node_id)
        assert not row["in_sync"] or mine["vector"] == theirs["vector"], (row, theirs)
        return bool(row["in_sync"])

    assert wait_until(truthful, LINK_UP_S), "the laptop never saw itself in sync again"
    assert links_between(laptop, server) == 1
