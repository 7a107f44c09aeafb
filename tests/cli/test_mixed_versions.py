"""Mixed versions sync, with real processes (issue 16, item 4; docs/PROTOCOL.md §10).

A laptop and a phone run a newer schema (one more nullable column on ``facts``, ``color``, with
its migration: tests/cli/newer_schema.py registers both through the public extension points
and runs feral's CLI); the home server between them runs this release, one schema version
behind. The laptop's color reaches the phone intact through the server, which keeps it opaque,
and the server's own edit of the fact keeps it too. This release never opens the newer
database. And two nodes that share no protocol version refuse each other, each naming the one
that must upgrade, in ``sync status`` and the serve log.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from feral.sync.schema import SCHEMA_VERSION

from .servers import FeralNode, Mesh, export_rows, pair, wait_until

HELPER = Path(__file__).with_name("newer_schema.py")
SYNC_TIMEOUT_S = 60.0


def run_newer(node: FeralNode, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """A CLI call of the newer release on ``node`` (``--protocols`` first, if given)."""
    head = list(args[:2]) if args[:1] == ("--protocols",) else []
    argv = [sys.executable, str(HELPER), *head, "--home", str(node.home), *args[len(head) :]]
    result = subprocess.run(
        argv, capture_output=True, text=True, env=node.environment(), timeout=60,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    if check:
        assert result.returncode == 0, f"{node.name}: {args}: {result.stderr}"
    return result


def serve_newer(node: FeralNode, *head: str) -> None:
    """Start ``serve`` of the newer release on ``node`` (the helper in place of ``feral``)."""
    node.starts += 1
    log = node.logs / f"{node.name}.serve.{node.starts}.log"
    argv = [sys.executable, str(HELPER), *head, "--home", str(node.home), "serve",
            "--port", str(node.port)]  # fmt: skip
    with log.open("wb") as handle:
        node.process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT,
            env=node.environment(),
        )  # fmt: skip
    node.wait_ready()


def fact_in(export: str, fact_id: str) -> dict[str, Any] | None:
    return export_rows(export).get(("facts", fact_id))


@pytest.mark.slow
def test_a_newer_column_crosses_an_older_relay_intact(mesh: Mesh):
    laptop, server, phone = mesh.add("laptop", "server", "phone")
    for device in (laptop, phone):
        pair(server, device, dial=False)
        pair(device, server, dial=True)
    remembered = json.loads(
        run_newer(
            laptop,
            "memory",
            "remember",
            "--subject",
            "the sky",
            "--predicate",
            "is",
            "--object",
            "blue",
            "--json",
        ).stdout  # fmt: skip
    )
    fact_id = remembered["row"]["id"] if "row" in remembered else remembered["id"]
    paint = [sys.executable, str(HELPER), "paint", str(laptop.home), laptop.node_id, fact_id]
    subprocess.run([*paint, "azure"], check=True, env=laptop.environment(), timeout=60)
    assert fact_in(run_newer(laptop, "memory", "export").stdout, fact_id)["color"] == "azure"

    # This release never opens the newer database, and says so on one line.
    refused = laptop.run("memory", "export", check=False)
    assert refused.returncode == 1 and refused.stdout == ""
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    newer, known = f"schema version {SCHEMA_VERSION + 1}", f"knows schema version {SCHEMA_VERSION}"
    assert newer in refused.stderr and known in refused.stderr

    server.start()
    server.wait_ready()
    serve_newer(laptop)
    serve_newer(phone)

    def phone_fact() -> dict[str, Any] | None:
        row = fact_in(run_newer(phone, "memory", "export").stdout, fact_id)
        return row if row and row.get("color") == "azure" else None

    arrived = wait_until(phone_fact, SYNC_TIMEOUT_S, interval=0.5)
    assert arrived is not None, server.serve_log()
    relayed = fact_in(server.export(), fact_id)
    assert relayed is not None and relayed["_opaque"] == ["azure"]
    assert "color" not in relayed

    # The older server edits the fact (archives it): the newer column survives its write.
    server.run("memory", "forget", fact_id)

    def archived_everywhere() -> bool:
        rows = [fact_in(run_newer(n, "memory", "export").stdout, fact_id) for n in (laptop, phone)]
        return all(r is not None and r["archived"] and r["color"] == "azure" for r in rows)

    assert wait_until(archived_everywhere, SYNC_TIMEOUT_S, interval=0.5), server.serve_log()
    for device in (laptop, phone):
        status = json.loads(run_newer(device, "sync", "status", "--json").stdout)
        (peer,) = status["peers"]
        assert peer["last_error"] is None and not peer["diverged"], peer


@pytest.mark.slow
def test_nodes_that_share_no_protocol_version_refuse_naming_who_must_upgrade(mesh: Mesh):
    laptop, server = mesh.add("laptop", "server")
    pair(server, laptop, dial=False)
    pair(laptop, server, dial=True)
    server.start()
    server.wait_ready()
    serve_newer(laptop, "--protocols", "4:5")
    upgrade = f"upgrade feral on server {server.node_id}"

    def refused_on_both() -> bool:
        return upgrade in str(laptop.peer_status(server)["last_error"]) and upgrade in str(
            server.peer_status(laptop)["last_error"]
        )

    assert wait_until(refused_on_both, SYNC_TIMEOUT_S, interval=0.5), server.serve_log()
    assert "protocol_mismatch" in server.serve_log()
    assert "speaks sync protocol 4 to 5" in server.serve_log()
    assert upgrade in laptop.serve_log()
    assert server.count("facts") == laptop.count("facts") == 0
