"""node/links/invite.py and node/serve/serve_address.py: the real keys behind an invitation, and its
URL."""

from __future__ import annotations

import socket
from pathlib import Path

from feral.node.embedding import serving_lock
from feral.node.home.identity import verify
from feral.node.links.invite import claim_for
from feral.node.serve.serve_address import (
    is_loopback_url,
    record_serve_url,
    running_serve_url,
    serve_url,
)
from feral.sync.invitation import Invitation, join_transcript
from feral.sync.types import NodeId

INVITER = NodeId("a" * 32)
JOINER = NodeId("b" * 32)


def test_a_proof_from_the_secret_verifies_with_the_node_s_own_verifier_and_only_for_it():
    secret = bytes(range(20))
    claim = claim_for(Invitation("ws://h:1", INVITER, secret))
    again = claim_for(Invitation("ws://other:2", INVITER, secret))
    assert claim.invitation_key == again.invitation_key  # derived from the secret alone
    join = claim.message(JOINER, b"\x01" * 32, b"\x02" * 32)
    signed = join_transcript(JOINER, INVITER, b"\x01" * 32, b"\x02" * 32, join.invitation_key)
    assert verify(join.invitation_key, signed, join.proof)

    guess = claim_for(Invitation("ws://h:1", INVITER, bytes(20)))
    assert guess.invitation_key != claim.invitation_key
    forged = guess.message(JOINER, b"\x01" * 32, b"\x02" * 32)
    assert not verify(claim.invitation_key, signed, forged.proof)
    other_session = join_transcript(JOINER, INVITER, b"\x03" * 32, b"\x02" * 32,
                                    join.invitation_key)  # fmt: skip
    assert not verify(join.invitation_key, other_session, join.proof)


def test_a_server_on_every_address_is_named_by_a_real_address():
    url = serve_url("0.0.0.0", 9090)
    host = url.removeprefix("ws://").rsplit(":", 1)[0]
    assert url.endswith(":9090") and host != "0.0.0.0"
    socket.inet_aton(host)  # an IPv4 address (loopback on a machine with no network)
    assert serve_url("192.168.1.20", 9090, "wss") == "wss://192.168.1.20:9090"
    assert serve_url("fe80::1", 9090) == "ws://[fe80::1]:9090"


def test_a_recorded_url_counts_only_while_a_server_holds_the_home(tmp_path: Path):
    record_serve_url(tmp_path, "ws://192.168.1.20:9090")
    assert running_serve_url(tmp_path) is None  # no serve holds the lock: a stale file
    with serving_lock(tmp_path):
        assert running_serve_url(tmp_path) == "ws://192.168.1.20:9090"


def test_loopback_urls_are_recognised():
    assert is_loopback_url("ws://127.0.0.1:9090") and is_loopback_url("ws://localhost:1")
    assert is_loopback_url("ws://[::1]:1")
    assert not is_loopback_url("ws://192.168.1.20:9090")
