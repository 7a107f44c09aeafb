"""Pairing by invitation in the pure core (sync/invitation.py and the session's join steps).

Two sessions are wired back to back as in test_session.py; the inviter answers ``JoinOffered``
the way the node does (accept, or refuse with a code), so what is checked here is the
handshake: who sends what when, what the proof binds, and that a refused join opens nothing.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, strategies as st

from feral.sync.codec import decode_message, encode_message
from feral.sync.errors import FeralError, InvalidInput
from feral.sync.events import JoinOffered
from feral.sync.invitation import (
    REFUSED,
    SECRET_BYTES,
    Invitation,
    InvitationRecord,
    Join,
    JoinClaim,
    JoinLimiter,
    format_secret,
    join_transcript,
    judge_invitation,
    parse_expiry,
    parse_invitation,
)
from feral.sync.messages import Auth
from feral.sync.session import Authenticated, Event, Failed, LocalPeer, State, SyncSession
from feral.sync.types import NodeId

from .session_support import FakeKeys, SimNode, messages

node_ids = st.text("abcdefghijklmnopqrstuvwxyz234567", min_size=32, max_size=32).map(NodeId)
nonces = st.binary(min_size=32, max_size=32)
keys32 = st.binary(min_size=32, max_size=32)


class Pair:
    """An inviter and a joiner session; ``answer`` decides each JoinOffered."""

    def __init__(
        self,
        inviter: LocalPeer,
        joiner: LocalPeer,
        answer: Callable[[SyncSession, JoinOffered], None],
    ) -> None:
        self.inviter = SyncSession(inviter)
        self.joiner = SyncSession(joiner)
        self.answer = answer
        self.events: dict[str, list[Event]] = {"inviter": [], "joiner": []}
        self.frames: dict[str, list[bytes]] = {"inviter": [], "joiner": []}

    def run(self) -> Pair:
        for _ in range(100):
            moved = False
            for name, session, other in (
                ("joiner", self.joiner, self.inviter),
                ("inviter", self.inviter, self.joiner),
            ):
                for event in session.events_received():
                    self.events[name].append(event)
                    if isinstance(event, JoinOffered):
                        self.answer(session, event)
                    elif isinstance(event, Authenticated):
                        session.send_vector({})
                    moved = True
                frames = session.frames_to_send()
                self.frames[name].extend(frames)
                for frame in frames:
                    other.receive_frame(frame)
                    moved = True
            if not moved:
                return self
        raise AssertionError("the handshake did not settle")

    def of(self, name: str, kind: type) -> list[object]:
        return [e for e in self.events[name] if isinstance(e, kind)]


@pytest.fixture
def keys() -> FakeKeys:
    return FakeKeys()


@pytest.fixture
def home(keys: FakeKeys) -> SimNode:
    return SimNode("home-server", keys)


@pytest.fixture
def phone(keys: FakeKeys) -> SimNode:
    return SimNode("phone", keys)


def claim(keys: FakeKeys, inviter: NodeId, seed: str = "invitation") -> JoinClaim:
    public, secret = keys.new_key(seed)
    return JoinClaim(inviter, public, FakeKeys.signer(secret))


def accept(session: SyncSession, event: JoinOffered) -> None:
    session.accept_join()


def joining(home: SimNode, phone: SimNode, join: JoinClaim, answer=accept) -> Pair:
    inviter = home.local_peer(accepts_joins=lambda: True)
    joiner = phone.local_peer(join=join, is_paired=lambda n: n == join.inviter)
    return Pair(inviter, joiner, answer).run()


def test_a_proven_join_is_offered_and_once_accepted_opens_both_sides(keys, home, phone):
    join = claim(keys, home.node_id)
    pair = joining(home, phone, join)

    (offer,) = pair.of("inviter", JoinOffered)
    assert (offer.peer, offer.name, offer.invitation_key) == (
        phone.node_id, "phone", join.invitation_key,
    )  # fmt: skip
    assert [e.peer for e in pair.of("inviter", Authenticated)] == [phone.node_id]
    assert [e.peer for e in pair.of("joiner", Authenticated)] == [home.node_id]
    assert pair.inviter.state is pair.joiner.state is State.OPEN
    kinds = [type(m).__name__ for m in messages(pair.frames["joiner"])[:3]]
    assert kinds == ["Hello", "Join", "Auth"]


def test_the_inviter_proves_nothing_until_it_accepts(keys, home, phone):
    """The joiner's link opening is its sign of acceptance: no Auth comes before the verdict."""
    held: list[JoinOffered] = []
    pair = joining(home, phone, claim(keys, home.node_id), answer=lambda s, e: held.append(e))

    assert held and not pair.of("joiner", Authenticated)
    assert not [m for m in messages(pair.frames["inviter"]) if isinstance(m, Auth)]
    pair.inviter.accept_join()
    pair.run()
    assert [e.peer for e in pair.of("joiner", Authenticated)] == [home.node_id]


def test_a_refused_join_reaches_the_joiner_and_opens_nothing(keys, home, phone):
    def refuse(session: SyncSession, event: JoinOffered) -> None:
        session.fail(REFUSED, "this invitation was already used", 1008)

    pair = joining(home, phone, claim(keys, home.node_id), answer=refuse)

    (failed,) = pair.of("joiner", Failed)
    assert (failed.code, failed.message, failed.remote) == (
        REFUSED, "this invitation was already used", True,
    )  # fmt: skip
    assert not pair.of("joiner", Authenticated) and not pair.of("inviter", Authenticated)


def test_a_proof_made_with_another_key_is_refused_before_the_node_is_asked(keys, home, phone):
    honest = claim(keys, home.node_id, "invitation")
    _, other_secret = keys.new_key("a guess")
    forged = JoinClaim(home.node_id, honest.invitation_key, FakeKeys.signer(other_secret))
    pair = joining(home, phone, forged)

    assert not pair.of("inviter", JoinOffered)
    (failed,) = pair.of("inviter", Failed)
    assert (failed.code, failed.message) == (REFUSED, "the invitation proof does not verify")
    assert not pair.of("joiner", Authenticated)


def test_a_join_recorded_in_one_session_is_refused_in_the_next(keys, home, phone):
    """A Join replayed by someone who saw it (a plain link's eavesdropper) meets new nonces."""
    join = claim(keys, home.node_id)
    first = joining(home, phone, join, answer=lambda s, e: None)
    (recorded,) = [f for f in first.frames["joiner"] if isinstance(decode_message(f), Join)]

    thief = SimNode("thief", keys)
    inviter = SyncSession(home.local_peer(accepts_joins=lambda: True))
    intruder = SyncSession(thief.local_peer(is_paired=lambda n: True))
    for frame in intruder.frames_to_send():
        inviter.receive_frame(frame)
    intruder.receive_frame(inviter.frames_to_send()[0])
    inviter.receive_frame(recorded)
    failed = [e for e in inviter.events_received() if isinstance(e, Failed)]
    assert [(e.code, e.message) for e in failed] == [
        (REFUSED, "the invitation proof does not verify")
    ]


@pytest.mark.parametrize("joins", [None, lambda: False, lambda: True])
def test_an_unpaired_peer_without_an_invitation_is_still_not_paired(keys, home, phone, joins):
    inviter = home.local_peer(accepts_joins=joins)
    stranger = phone.local_peer(is_paired=lambda n: True)
    pair = Pair(inviter, stranger, accept).run()

    (failed,) = pair.of("inviter", Failed)
    assert failed.code == "not_paired" and phone.node_id in failed.message
    assert not pair.of("inviter", JoinOffered) and not pair.of("joiner", Authenticated)


def test_a_joiner_refuses_a_node_that_is_not_the_inviter_and_sends_it_no_proof(keys, home, phone):
    elsewhere = SimNode("someone-else", keys)
    join = claim(keys, elsewhere.node_id)
    inviter = home.local_peer(accepts_joins=lambda: True)
    joiner = phone.local_peer(join=join, is_paired=lambda n: n == join.inviter)
    pair = Pair(inviter, joiner, accept).run()

    (failed,) = pair.of("joiner", Failed)
    assert failed.code == "wrong_peer" and elsewhere.node_id in failed.message
    assert not [m for m in messages(pair.frames["joiner"]) if isinstance(m, Join)]


def test_a_paired_peer_needs_no_invitation(keys, home, phone):
    home.pair(phone)
    join = claim(keys, home.node_id)
    pair = joining(home, phone, join)
    assert not pair.of("inviter", JoinOffered)
    assert [e.peer for e in pair.of("joiner", Authenticated)] == [home.node_id]


# -- the proof's transcript ------------------------------------------------------------------


@given(node_ids, node_ids, nonces, nonces, keys32, st.integers(0, 4), st.binary(min_size=1))
def test_the_transcript_changes_with_every_part(joiner, inviter, n1, n2, key, which, noise):
    """A proof covers both ids, both nonces and the key: change any one and it no longer fits."""
    parts = [joiner, inviter, n1, n2, key]
    original = join_transcript(*parts)
    changed = list(parts)
    if which < 2:
        flipped = "a" if parts[which][0] != "a" else "b"
        changed[which] = NodeId(flipped + parts[which][1:])
    else:
        value = bytearray(parts[which])
        value[noise[0] % len(value)] ^= 1 + noise[-1] % 255
        changed[which] = bytes(value)
    assert join_transcript(*changed) != original


@given(node_ids, node_ids, nonces, nonces)
def test_swapping_the_roles_changes_the_transcript(a, b, n1, n2):
    if (a, n1) != (b, n2):
        assert join_transcript(a, b, n1, n2, bytes(32)) != join_transcript(b, a, n2, n1, bytes(32))


def test_join_messages_survive_the_codec_and_refuse_wrong_sizes():
    join = Join(bytes(range(32)), bytes(64))
    assert decode_message(encode_message(join)) == join
    for bad in (Join(bytes(31), bytes(64)), Join(bytes(32), bytes(63))):
        with pytest.raises(FeralError):
            decode_message(encode_message(bad))


# -- the link --------------------------------------------------------------------------------

hosts = st.sampled_from(["192.168.1.20", "laptop.local", "[fe80::1]", "127.0.0.1"])


@given(st.sampled_from(["ws", "wss"]), hosts, st.integers(1, 65535), node_ids,
       st.binary(min_size=SECRET_BYTES, max_size=SECRET_BYTES))  # fmt: skip
def test_an_invitation_link_round_trips(scheme, host, port, inviter, secret):
    invitation = Invitation(f"{scheme}://{host}:{port}", inviter, secret)
    link = invitation.link()
    assert link.startswith("feral://join?")
    assert parse_invitation(link) == invitation
    assert parse_invitation(link).secret == secret


@pytest.mark.parametrize(
    ("link", "says"),
    [
        ("https://example.org", "not a feral invitation"),
        ("feral://join?url=ws%3A%2F%2Fh%3A1&node=" + "a" * 32, "lacks secret"),
        ("feral://join?url=http%3A%2F%2Fh%3A1&node=" + "a" * 32 + "&secret=" + "b" * 32,
         "ws:// or wss://"),
        ("feral://join?url=ws%3A%2F%2Fh%3A1&node=short&secret=" + "b" * 32, "node id"),
        ("feral://join?url=ws%3A%2F%2Fh%3A1&node=" + "a" * 32 + "&secret=" + "b" * 31 + "1",
         "secret must be 32 characters"),
    ],
)  # fmt: skip
def test_a_malformed_link_says_what_is_wrong(link, says):
    with pytest.raises(InvalidInput, match=says) as caught:
        parse_invitation(link)
    assert "b" * 31 not in str(caught.value)  # the secret is never echoed


def test_a_secret_reads_as_32_base32_characters():
    assert len(format_secret(bytes(SECRET_BYTES))) == 32


# -- the verdict and the rate limit ------------------------------------------------------------


def test_the_verdict_names_unknown_used_and_expired_invitations():
    assert "no invitation here matches" in judge_invitation(None, 0)
    used = InvitationRecord("phone", 10_000, used_ms=5, used_by=NodeId("x" * 32))
    assert "already used by " + "x" * 32 in judge_invitation(used, 1)
    assert "expired 3 s ago" in judge_invitation(InvitationRecord("", 10_000), 13_000)
    assert judge_invitation(InvitationRecord("", 10_000), 9_999) is None


def test_too_many_failed_joins_lock_every_join_out_for_a_while():
    limiter = JoinLimiter(max_failures=5, window_ms=60_000, lockout_ms=300_000)
    for t in range(4):
        limiter.failed(t * 1000)
    assert limiter.refusal(4_000) is None
    limiter.failed(5_000)
    assert "refused for 300 s more" in limiter.refusal(5_000)
    assert limiter.refusal(304_999) is not None
    assert limiter.refusal(305_000) is None


@given(st.lists(st.integers(0, 10_000_000), max_size=40).map(sorted))
def test_joins_lock_out_only_after_enough_failures_within_one_window(times):
    limiter = JoinLimiter(max_failures=5, window_ms=60_000, lockout_ms=300_000)
    window: list[int] = []
    locked_until = 0
    for t in times:
        limiter.failed(t)
        window = [w for w in window if w > t - 60_000] + [t]
        if len(window) >= 5:
            locked_until, window = t + 300_000, []
        assert (limiter.refusal(t) is not None) == (t < locked_until)


@pytest.mark.parametrize(("text", "ms"), [("30s", 30_000), ("15m", 900_000), ("2h", 7_200_000),
                                          ("1d", 86_400_000), (" 10 min ", 600_000)])  # fmt: skip
def test_expiry_reads_people_units(text, ms):
    assert parse_expiry(text) == ms


@pytest.mark.parametrize("text", ["0s", "8d", "15", "soon", "-5m", "1.5h"])
def test_expiry_refuses_anything_else(text):
    with pytest.raises(InvalidInput, match="--expires"):
        parse_expiry(text)
