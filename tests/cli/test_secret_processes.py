"""Issue 14: a secret is refused on every write path, so it is never stored and never replicated.

Real ``feral`` processes: the CLI in subprocesses, the HTTP API of a running ``feral serve``, and
two devices syncing over loopback through a relay that keeps every byte it carries. After each
attempt the raw bytes of the database, its WAL and shared-memory files, and an export are
searched for the secret and for every 10-character piece of it; a fact written beside it is
found there, so the search is known to look where rows are.
"""

from __future__ import annotations

import http.client
import json
import random
import subprocess
from pathlib import Path

import pytest

from tests.mcp_answers import call, refusal

from .byte_relay import byte_relay
from .helpers import feral_process, holds_digits, init_home
from .servers import CLI_TIMEOUT_S, FeralNode, Mesh, pair
from .test_mcp_stdio import mcp_session

PIECE = 10
KEY_ALPHABET = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def new_key(seed: int, prefix: str = "sk-proj-", size: int = 48) -> str:
    rng = random.Random(seed)
    return prefix + "".join(rng.choice(KEY_ALPHABET) for _ in range(size)) + "Q7x"


def pieces(secret: str) -> list[bytes]:
    raw = secret.encode()
    return [raw[i : i + PIECE] for i in range(len(raw) - PIECE + 1)]


def stored_bytes(node: FeralNode) -> dict[str, bytes]:
    """The database's files as they are on disk, and an export written to a file."""
    export = node.home.parent / f"{node.name}-export.jsonl"
    node.run("memory", "export", "-o", str(export))
    files = {"export": export.read_bytes()}
    for suffix in ("", "-wal", "-shm"):
        path = Path(f"{node.database}{suffix}")
        if path.exists():
            files[path.name] = path.read_bytes()
    return files


def assert_nowhere(node: FeralNode, *secrets: str, beside: str) -> None:
    """No piece of any secret in the files; ``beside`` (written in the same run) is there."""
    files = stored_bytes(node)
    assert beside.encode() in files["export"]
    assert any(beside.encode() in data for name, data in files.items() if name != "export")
    for secret in secrets:
        for name, data in files.items():
            found = [p for p in pieces(secret) if p in data]
            assert not found, f"{node.name}: {name} holds part of a refused secret: {found[:3]}"


def one_line_refusal(result: subprocess.CompletedProcess[str], *secrets: str) -> str:
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for secret in secrets:
        assert not [p for p in pieces(secret) if p.decode() in lines[0]], lines[0]
    return lines[0]


@pytest.mark.slow
def test_remember_refuses_a_secret_and_stores_nothing_of_it(mesh: Mesh) -> None:
    (node,) = mesh.add("solo")
    node.run("memory", "remember", "the billing job runs nightly at two")
    key = new_key(1)
    said = node.run("memory", "remember", f"the billing job uses {key}", check=False)
    assert one_line_refusal(said, key) == (
        "Error: refused: the text contains what looks like an OpenAI API key (never stored); "
        "remove it and try again"
    )
    password = "Tr0ub4dor-" + new_key(2, "", 12)
    triple = ("--subject", "user", "--predicate", "bank_password", "--object", password)
    refused = one_line_refusal(node.run("memory", "remember", *triple, check=False), password)
    assert "looks like a password" in refused
    assert node.count("facts") == 1
    assert_nowhere(node, key, password, beside="the billing job runs nightly at two")


@pytest.mark.slow
def test_import_refuses_every_line_or_skips_the_lines_holding_secrets(mesh: Mesh) -> None:
    (node,) = mesh.add("solo")
    token, access = new_key(3, "ghp_", 33), "AKIA" + new_key(4, "", 13).upper()[:16]
    path = node.home.parent / "facts.txt"
    lines = [
        "the spare key is with Ana next door",
        json.dumps({"fact": f"deploy with {token}"}),
        "",
        f"the old account used {access}",
        json.dumps({"subject": "Ana", "predicate": "lives_in", "object": "Porto"}),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    refused = node.run("memory", "import", str(path), check=False)
    line = one_line_refusal(refused, token, access)
    assert line.startswith("Error: line 2: refused: the text contains what looks like a GitHub")
    assert "nothing was written" in line and "--secrets skip" in line
    assert not node.database.exists() or node.count("facts") == 0

    skipped = node.run("memory", "import", "--secrets", "skip", str(path))
    assert "skipped 2 line(s) holding what looks like a secret: 2, 4" in skipped.stderr
    assert "Imported 2 line(s): 2 new fact(s)" in skipped.stderr
    assert node.count("facts") == 2
    assert_nowhere(node, token, access, beside="the spare key is with Ana next door")


def transcript_line(session: str, role: str, content: str) -> str:
    return json.dumps({"session": session, "role": role, "content": content})


@pytest.mark.slow
def test_ingest_refuses_every_line_or_skips_the_lines_holding_secrets(mesh: Mesh) -> None:
    (node,) = mesh.add("solo")
    key_body = new_key(5, "", 60)
    private = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{key_body}\n-----END OPENSSH PRIVATE KEY-----"
    card = "4539 1488 0343 6467"  # Luhn-valid, a test number's shape
    path = node.home.parent / "talk.jsonl"
    path.write_text(
        "\n".join(
            [
                transcript_line("trip", "user", "we land in Porto on the twelfth of June"),
                transcript_line("trip", "assistant", "noted: Porto, twelfth of June"),
                transcript_line("trip", "user", f"here is the server key {private}"),
                transcript_line("trip", "user", f"book it on my card {card} please"),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    refused = node.run("memory", "ingest", str(path), check=False)
    line = one_line_refusal(refused, key_body, card)
    assert line.startswith("Error: line 3: refused: the text contains what looks like a private")
    assert not node.database.exists() or node.count("episodes") == 0

    skipped = node.run("memory", "ingest", "--secrets", "skip", str(path), "--json")
    assert "skipped 2 line(s) holding what looks like a secret: 3, 4" in skipped.stderr
    assert json.loads(skipped.stdout)["messages"] == 2
    assert node.count("episodes") >= 1
    assert_nowhere(node, key_body, card.replace(" ", ""), card, beside="Porto")


def post(port: int, path: str, body: object) -> tuple[int, dict[str, object]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=CLI_TIMEOUT_S)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        answer = conn.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        conn.close()


@pytest.mark.slow
def test_the_api_answers_422_and_stores_nothing_of_the_secret(mesh: Mesh) -> None:
    (node,) = mesh.add("solo")
    mesh.start(node)
    status, _ = post(node.port, "/api/memory/remember", {"fact": "the API marker fact"})
    assert status == 200
    key = new_key(6, "sk-ant-api03-", 80)
    status, answer = post(node.port, "/api/memory/remember", {"fact": f"use {key} for the bot"})
    assert status == 422
    assert answer == {
        "error": {
            "code": "secret_refused",
            "message": "refused: the text contains what looks like an Anthropic API key "
            "(never stored); remove it and try again",
        }
    }
    stripe = new_key(7, "sk_live_", 24)
    triple = {"subject": "shop", "predicate": "stripe_key", "object": stripe}
    status, answer = post(node.port, "/api/memory/remember", triple)
    assert status == 422 and "Stripe secret key" in json.dumps(answer), answer
    assert stripe[8:18] not in json.dumps(answer)
    assert_nowhere(node, key, stripe, beside="the API marker fact")  # the WAL is live here
    assert not [p for p in pieces(key) if p.decode() in node.serve_log()]


@pytest.mark.slow
def test_a_refused_secret_never_crosses_the_wire_to_a_peer(mesh: Mesh) -> None:
    laptop, phone = mesh.add("laptop", "phone")
    mesh.start(phone)
    with byte_relay(phone.port) as relay:
        url = f"ws://127.0.0.1:{relay.port}"
        laptop.cli("sync", "peers", "add", url, "--node-id", phone.node_id)
        pair(phone, laptop, dial=False)
        key = new_key(8, "glpat-", 24)
        laptop.run("memory", "remember", "written on the laptop before the key")
        one_line_refusal(laptop.run("memory", "remember", f"ci uses {key}", check=False), key)
        path = laptop.home.parent / "more.txt"
        path.write_text(f"the runner token is {key}\nthe runner lives in rack four\n")
        laptop.run("memory", "import", "--secrets", "skip", str(path))
        hf = new_key(9, "hf_", 34)  # and on the phone, through its API
        assert post(phone.port, "/api/memory/remember", {"fact": f"model pulls use {hf}"})[0] == 422
        assert post(phone.port, "/api/memory/remember", {"fact": "the phone's own fact"})[0] == 200
        laptop.run("sync", "now")
        carried = relay.bytes_seen()
    assert relay.connections >= 1
    assert b"written on the laptop before the key" in carried  # the search sees rows go by
    assert b"the runner lives in rack four" in carried
    assert b"the phone's own fact" in carried
    assert not [p for p in pieces(key) + pieces(hf) if p in carried]
    assert laptop.export() == phone.export()
    assert_nowhere(phone, key, hf, beside="the runner lives in rack four")
    assert_nowhere(laptop, key, hf, beside="the phone's own fact")


WRITE_PATHS = {
    "remember": ("memory", "remember", "mein E-Mail-Passwort ist Rotkehlchen-1977"),
    "remember a triple": (
        "memory", "remember", "--subject", "user", "--predicate", "door_code", "--object", "4821#",
    ),
    "link --note": ("memory", "link", "{a}", "{b}", "--type", "related_to", "--note",
                    "la contraseña del wifi es Naranja-2020"),
    "boost --reason": ("memory", "boost", "{a}", "2", "--reason", "le code de la porte est 2580B"),
    "graph add": ("graph", "add", "service", "ci ghp_Zq7Lk2Xw9Pm4Rt6Yv8Bn3Cd5Fg1Hj0Ks7Qa3"),
    "graph add --relation": ("graph", "add", "--relation", "person:Sam", "wifi_password",
                             "thing:Sunflower-2291"),
    "log record": ("log", "record", "login", "--args", '{"user": "bob", "pin": "7712"}'),
}  # fmt: skip
"""Each write path of the CLI with a credential as people write it (several languages)."""
VALUES = ("Rotkehlchen-1977", "Naranja-2020", "2580B", "ghp_Zq7Lk2Xw9Pm4", "Sunflower-2291")


@pytest.mark.slow
def test_every_write_path_refuses_a_credential_and_stores_none(mesh: Mesh) -> None:
    (node,) = mesh.add("solo")
    a = json.loads(node.run("memory", "remember", "the router is in the hall", "--json").stdout)
    b = json.loads(node.run("memory", "remember", "the router restarts weekly", "--json").stdout)
    for path, argv in WRITE_PATHS.items():
        args = [arg.replace("{a}", a["id"]).replace("{b}", b["id"]) for arg in argv]
        line = one_line_refusal(node.run(*args, check=False), *VALUES)
        assert "refused: the text contains what looks like" in line, (path, line)
    # the same paths with ordinary words are written, so the refusals were the secrets'
    node.run("memory", "link", a["id"], b["id"], "--type", "related_to", "--note", "same router")
    node.run("memory", "boost", a["id"], "2", "--reason", "asked about it daily")
    node.run("graph", "add", "--relation", "person:Sam", "lives_in", "place:Porto")
    export = node.export()
    assert "same router" in export and "asked about it daily" in export and "Porto" in export
    for value in (*VALUES, "4821#"):
        assert value not in export, value
    assert not holds_digits(export, "7712")
    assert_nowhere(node, *VALUES, beside="the router restarts weekly")


@pytest.mark.slow
async def test_the_mcp_tools_refuse_a_credential_in_a_note_a_reason_or_the_graph(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    init_home(home)
    async with mcp_session(home) as session:
        a = await call(session, "remember", fact="the router is in the hall")
        b = await call(session, "remember", fact="the router restarts weekly")
        refused = [
            await refusal(session, "link", from_id=a["memory_id"], to_id=b["memory_id"],
                          type="related_to", note="wifi key: Sunflower-2291"),
            await refusal(session, "boost", id=a["memory_id"], importance=2,
                          reason="mi PIN es 5678"),
            await refusal(session, "graph_add", source="person:Sam", relation="wifi_password",
                          target="thing:Naranja-2020"),
        ]  # fmt: skip
    for message in refused:
        assert "secret" in message and "Traceback" not in message, message
        assert not {"Sunflower-2291", "5678", "Naranja-2020"} & set(message.split()), message
    export = feral_process(home, "memory", "export").stdout
    assert "the router is in the hall" in export
    assert "Sunflower" not in export and not holds_digits(export, "5678")
    assert "Naranja" not in export
