"""Encrypted links between real ``feral serve`` processes (issue 13): what a relay on the path
sees, a relay with another certificate refused before any frame, status per link, and the HTTP
API reached over the same TLS with the certificate ``feral sync cert`` prints."""

from __future__ import annotations

import base64
import json
import ssl
import subprocess
import urllib.request
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    load_pem_private_key,
)

from .relays import ImpostorRelay, LoggingRelay
from .servers import FeralNode, Mesh, pair, wait_until

FACTS = {
    "alice": "my doctor is Dr Quillfeather at 12 Wrenfield Lane, Tuesdays",
    "bea": "the allergy clinic number is 0171 555 0199, ask for Marguerite",
}


def key_material(node: FeralNode) -> list[bytes]:
    """The node key as PEM, its base64 body lines, and the raw 32 private bytes."""
    pem = (node.home / "node.key").read_bytes()
    key = load_pem_private_key(pem, password=None)
    raw = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    lines = [line for line in pem.splitlines() if line and not line.startswith(b"-----")]
    return [pem, raw, base64.b64encode(raw), *lines]


def fingerprint(node: FeralNode) -> str:
    lines = dict(line.split(None, 1) for line in node.cli("sync", "cert").splitlines())
    return lines["sha256"].strip()


def peer_row(node: FeralNode, peer: FeralNode) -> dict[str, object]:
    rows = [p for p in node.status()["peers"] if p["node_id"] == peer.node_id]
    assert rows, node.status()
    return rows[0]


@pytest.mark.slow
def test_a_relay_between_two_nodes_sees_no_fact_and_no_key(mesh: Mesh) -> None:
    alice, bea = mesh.add("alice", "bea", tls=True)
    (carol,) = mesh.add("carol")  # a plain ws:// link on loopback, for status to tell apart
    for node in (alice, bea):
        node.cli("memory", "remember", FACTS[node.name])
    pair(bea, alice, dial=False)
    pair(carol, alice, dial=False)
    mesh.start(bea, carol)
    with LoggingRelay(bea.port).running() as relay:
        alice.cli("sync", "peers", "add", f"wss://127.0.0.1:{relay.port}", "--node-id", bea.node_id)
        pair(alice, carol, dial=True)
        alice.cli("sync", "now", "--peer", bea.node_id)
        wire = relay.wire()
    alice.cli("sync", "now", "--peer", carol.node_id)

    assert f"TLS certificate sha256 {fingerprint(bea)}" in bea.serve_log()
    assert "Quillfeather at 12 Wrenfield Lane" in bea.export()
    assert "ask for Marguerite" in alice.export()
    assert relay.connections == 1 and len(wire) > 1000
    # bea's fact and Hello travel server to client, unmasked on a plain link (the control below
    # finds them there); alice's would be masked by WebSocket framing even in clear.
    for fact in FACTS.values():
        for needle in (fact.encode(), fact[-20:].encode(), fact.split()[-1].encode()):
            assert needle not in wire
    for node in (alice, bea):
        for material in key_material(node):
            assert material not in wire
    assert b"/sync" not in wire and b"Upgrade" not in wire  # even the upgrade is encrypted
    assert bea.node_id.encode() not in wire  # the Hello too

    dialled, accepted = peer_row(alice, bea), peer_row(bea, alice)
    assert dialled["encrypted"] is True and accepted["encrypted"] is True
    assert dialled["certificate"] == accepted["certificate"] == fingerprint(bea)
    plain = peer_row(alice, carol)
    assert plain["encrypted"] is False and plain["certificate"] is None
    table = alice.cli("sync", "status")
    assert f"wss cert {fingerprint(bea)[:23]}" in table and "ws (unencrypted)" in table


@pytest.mark.slow
def test_the_same_relay_on_a_plain_link_sees_the_facts(mesh: Mesh) -> None:
    """The control: the relay and its search would catch the text if it crossed in clear. (The
    server's rows: what a client sends is masked by WebSocket framing, which hides nothing but
    would hide it from a plain search.)"""
    alice, bea = mesh.add("alice", "bea")
    bea.cli("memory", "remember", FACTS["bea"])
    pair(bea, alice, dial=False)
    mesh.start(bea)
    with LoggingRelay(bea.port).running() as relay:
        alice.cli("sync", "peers", "add", f"ws://127.0.0.1:{relay.port}", "--node-id", bea.node_id)
        alice.cli("sync", "now")
        wire = relay.wire()
    assert b"ask for Marguerite" in wire and b"GET /sync" in wire
    assert bea.node_id.encode() in wire  # its Hello


@pytest.mark.slow
def test_a_relay_with_another_certificate_is_refused_before_any_frame(mesh: Mesh) -> None:
    alice, bea, mallory = mesh.add("alice", "bea", "mallory", tls=True)
    alice.cli("memory", "remember", FACTS["alice"])
    mallory.cli("sync", "cert")  # writes mallory's certificate beside its key
    impostor = ImpostorRelay(mallory.home / "node.crt", mallory.home / "node.key")
    with impostor.running():
        url = f"wss://127.0.0.1:{impostor.port}"
        alice.cli("sync", "peers", "add", url, "--node-id", bea.node_id)
        result = alice.run("sync", "now", check=False)

    assert result.returncode == 1
    error = result.stderr.strip()
    assert len(error.splitlines()) == 1, error
    assert "Traceback" not in error
    assert bea.node_id in error and mallory.node_id in error and "before sending" in error
    assert impostor.handshakes == 1  # TLS completed: the pin refused it, not the handshake
    assert bytes(impostor.received) == b""  # not one byte of the upgrade, nor any frame
    row = peer_row(alice, bea)
    assert mallory.node_id in str(row["last_error"]) and row["encrypted"] is False


@pytest.mark.slow
def test_the_serve_log_names_the_mismatch_once(mesh: Mesh) -> None:
    alice, bea, mallory = mesh.add("alice", "bea", "mallory", tls=True)
    mallory.cli("sync", "cert")
    impostor = ImpostorRelay(mallory.home / "node.crt", mallory.home / "node.key")
    with impostor.running():
        alice.cli("sync", "peers", "add", f"wss://127.0.0.1:{impostor.port}", "--node-id",
                  bea.node_id)  # fmt: skip
        mesh.start(alice)
        assert wait_until(lambda: "before sending anything" in alice.serve_log(), 30)
    log = alice.serve_log()
    assert log.count("before sending anything") == 1, log
    assert mallory.node_id in log and bea.node_id in log
    assert bytes(impostor.received) == b""


@pytest.mark.slow
def test_wss_to_a_plain_server_says_the_tls_handshake_failed(mesh: Mesh) -> None:
    alice, bea = mesh.add("alice", "bea")
    pair(bea, alice, dial=False)
    mesh.start(bea)  # plain ws:// on loopback
    alice.cli("sync", "peers", "add", f"wss://127.0.0.1:{bea.port}", "--node-id", bea.node_id)
    result = alice.run("sync", "now", check=False)
    assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1
    assert "the TLS handshake failed" in result.stderr and "feral serve --tls" in result.stderr


@pytest.mark.slow
def test_plain_ws_to_another_machine_needs_the_insecure_option(mesh: Mesh) -> None:
    (alice,) = mesh.add("alice")
    peer_id = "a" * 32
    refused = alice.run(
        "sync", "peers", "add", "ws://192.0.2.7:9090", "--node-id", peer_id, check=False
    )
    assert refused.returncode == 1
    assert "--insecure-plaintext" in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert alice.json("sync", "peers", "--json") == []

    alice.cli("sync", "peers", "add", "ws://127.0.0.1:9", "--node-id", "b" * 32)  # loopback
    alice.cli(
        "sync", "peers", "add", "ws://192.0.2.7:9090", "--node-id", peer_id, "--insecure-plaintext"
    )
    settings = json.loads((alice.home / "settings.json").read_text())
    flags = {p["node_id"]: p.get("insecure_plaintext", False) for p in settings["sync"]["peers"]}
    assert flags == {"b" * 32: False, peer_id: True}


def test_a_plain_url_edited_into_settings_is_refused_when_dialled(mesh: Mesh) -> None:
    (alice,) = mesh.add("alice")
    path = alice.home / "settings.json"
    settings = json.loads(path.read_text())
    settings["sync"]["peers"] = [{"node_id": "c" * 32, "url": "ws://192.0.2.7:9090"}]
    path.write_text(json.dumps(settings))

    result = alice.run("sync", "now", check=False)
    assert result.returncode == 1 and "--insecure-plaintext" in result.stderr
    assert "unencrypted" in result.stderr


@pytest.mark.slow
def test_curl_reaches_the_api_over_tls_with_the_printed_certificate(
    mesh: Mesh, tmp_path: Path
) -> None:
    (bea,) = mesh.add("bea", tls=True)
    bea.cli("memory", "remember", FACTS["bea"])
    mesh.start(bea)
    pem = tmp_path / "bea.pem"
    pem.write_text(bea.cli("sync", "cert", "--pem"))
    url = f"https://localhost:{bea.port}/api/memory/stats"

    context = ssl.create_default_context(cafile=str(pem))  # hostname checked: "localhost"
    with urllib.request.urlopen(url, context=context, timeout=10) as response:
        assert json.loads(response.read())["node_id"] == bea.node_id

    curl = subprocess.run(
        ["curl", "--silent", "--show-error", "--cacert", str(pem),
         "--resolve", f"localhost:{bea.port}:127.0.0.1", url],  # as docs/OPERATIONS.md shows
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    if curl.returncode != 127:
        assert curl.returncode == 0, curl.stderr
        assert json.loads(curl.stdout)["node_id"] == bea.node_id
    plain = subprocess.run(
        ["curl", "--silent", f"http://localhost:{bea.port}/api/memory/stats"],
        capture_output=True, timeout=30, check=False,
    )  # fmt: skip
    assert plain.returncode != 0 or not plain.stdout.startswith(b"{")  # no plain HTTP beside
