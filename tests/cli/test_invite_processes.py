"""Pairing by invitation between real processes: ``feral serve`` invites, ``feral sync join``
joins from another home, on loopback (docs/PROTOCOL.md §4, "Pairing by invitation").

The inviter's invitations are made by ``feral sync invite`` processes beside its running
server, which reads them from the shared database: that is the flow a user follows.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from feral.sync.invitation import Invitation, parse_invitation

from .servers import FeralNode, Mesh, wait_until
from .test_sync_processes import holds, one_line_error


def invite(node: FeralNode, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """``feral sync invite --json ARGS`` as a process of its own."""
    result = subprocess.run(
        node.argv("sync", "invite", "--json", *args),
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        env={**node.environment(), **(env or {})},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    made: dict[str, Any] = json.loads(result.stdout)
    return made


def peer_ids(node: FeralNode) -> dict[str, str | None]:
    return {p["node_id"]: p["url"] for p in node.json("sync", "peers")}


def refused_in_log(server: FeralNode, joiner: FeralNode, why: str) -> bool:
    line = f"! refused a join by {joiner.node_id} ({joiner.name}): {why}"
    return line in server.serve_log()


@pytest.mark.slow
def test_a_device_joins_by_invitation_and_then_both_sync_live_both_ways(mesh: Mesh):
    home, phone = mesh.add("home", "phone")
    home.cli("memory", "remember", "the spare key is under the blue pot")
    mesh.start(home)

    made = invite(home, "--name", "my phone")
    assert made["url"] == home.url and made["node_id"] == home.node_id
    assert parse_invitation(made["link"]).secret.hex()  # the link packs all three
    joined = phone.run("sync", "join", made["link"])

    assert f"Paired with {home.node_id} at {home.url}; received 1 row(s)" in joined.stdout
    assert "the spare key is under the blue pot" in phone.export()
    assert peer_ids(phone) == {home.node_id: home.url}
    assert peer_ids(home) == {phone.node_id: None}  # accept only: the phone dials in
    log = home.serve_log()
    assert f"= {phone.node_id} (phone) joined by invitation 'my phone': paired" in log
    assert made["secret"] not in log

    mesh.start(phone)  # its server dials the home server, now paired both ways
    phone.run("memory", "remember", "the car is on level 3")
    assert wait_until(lambda: holds(home, "the car is on level 3"), 30), home.serve_log()
    home.run("memory", "remember", "milk is in the fridge")
    assert wait_until(lambda: holds(phone, "milk is in the fridge"), 30), phone.serve_log()


@pytest.mark.slow
def test_wrong_reused_and_expired_invitations_are_refused_on_both_sides(mesh: Mesh):
    home, first, wrong, reuser, late = mesh.add("home", "first", "wrong", "reuser", "late")
    home.cli("memory", "remember", "only for paired devices")
    mesh.start(home)

    made = invite(home)
    good = parse_invitation(made["link"])
    other_secret = ("a" if made["secret"][0] != "a" else "b") + made["secret"][1:]
    mistyped = made["link"].replace(made["secret"], other_secret)
    error = one_line_error(wrong.run("sync", "join", mistyped, check=False))
    assert "no invitation here matches (a wrong or mistyped secret" in error, error
    assert made["secret"] not in error and other_secret not in error
    assert wait_until(lambda: refused_in_log(home, wrong, "no invitation here matches"), 10)

    first.run("sync", "join", made["link"])
    error = one_line_error(reuser.run("sync", "join", made["link"], check=False))
    assert f"this invitation was already used by {first.node_id}" in error, error
    assert wait_until(lambda: refused_in_log(home, reuser, "this invitation was already used"), 10)

    # An invitation made with the clock two minutes back, open for one: it expired a minute ago.
    stale = invite(home, "--expires", "1m", env={"FERAL_CLOCK_OFFSET_MS": "-120000"})
    error = one_line_error(late.run("sync", "join", stale["link"], check=False))
    assert "this invitation expired" in error and "ask for a new one" in error, error
    assert wait_until(lambda: refused_in_log(home, late, "this invitation expired"), 10)

    assert set(peer_ids(home)) == {first.node_id}
    for refused in (wrong, reuser, late):
        assert peer_ids(refused) == {}
        assert "only for paired devices" not in refused.export()
    log, database = home.serve_log(), home.database.read_bytes()
    assert good.secret not in database  # only the public key derived from it is kept
    for secret in (made["secret"], other_secret, stale["secret"]):
        assert secret not in log and secret.encode() not in database


@pytest.mark.slow
def test_after_five_failed_joins_even_a_good_invitation_waits(mesh: Mesh):
    home, guesser, friend = mesh.add("home", "guesser", "friend")
    mesh.start(home)
    never_made = Invitation(home.url, home.node_id, bytes(20)).link()
    error = one_line_error(guesser.run("sync", "join", never_made, check=False))
    assert f"{home.node_id} has no invitation open" in error, error

    made = invite(home)
    for attempt in range(5):
        forged = made["link"].replace(made["secret"], "q" * 31 + "abcde"[attempt])
        error = one_line_error(guesser.run("sync", "join", forged, check=False))
        assert "no invitation here matches" in error, error

    error = one_line_error(friend.run("sync", "join", made["link"], check=False))
    assert "too many failed joins here; joins are refused for" in error, error
    assert wait_until(lambda: refused_in_log(home, friend, "too many failed joins"), 10)
    assert peer_ids(home) == {}
