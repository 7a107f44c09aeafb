"""The pace of one paired peer (node/links/rate_limits.py), on a clock the test moves by hand, and
what each frame weighs (node/links/link_guard.py)."""

from __future__ import annotations

import pytest

from feral.node.links.link_guard import VECTOR_WEIGHT, frame_weight
from feral.node.links.rate_limits import PeerPace, TokenBucket
from feral.sync.codec import encode_message
from feral.sync.messages import ErrorMessage, Vector


def test_a_bucket_starts_full_and_lets_a_burst_through() -> None:
    bucket = TokenBucket(rate=10, capacity=20)
    assert [bucket.take(1, 0.0) for _ in range(20)] == [0.0] * 20


def test_beyond_the_burst_the_wait_is_the_debt_over_the_rate() -> None:
    bucket = TokenBucket(rate=10, capacity=20)
    for _ in range(20):
        bucket.take(1, 0.0)
    assert bucket.take(1, 0.0) == pytest.approx(0.1)
    assert bucket.take(1, 0.0) == pytest.approx(0.2)


def test_a_bucket_refills_at_its_rate_up_to_its_capacity() -> None:
    bucket = TokenBucket(rate=10, capacity=20)
    for _ in range(20):
        bucket.take(1, 0.0)
    assert bucket.take(5, 0.5) == 0.0  # half a second: five back
    assert bucket.take(1, 0.5) == pytest.approx(0.1)
    assert bucket.take(0, 100.0) == 0.0
    assert bucket.tokens == 20  # never more than its capacity


def test_a_clock_that_steps_back_refills_nothing() -> None:
    bucket = TokenBucket(rate=10, capacity=1)
    bucket.take(1, 5.0)
    assert bucket.take(1, 4.0) == pytest.approx(0.1)


def flood(pace: PeerPace, start: float, seconds: float, size: int = 10) -> tuple[float, bool]:
    """Send frames as fast as ``pace`` lets them in, from ``start`` for ``seconds``: the
    time reached and whether the peer was dropped."""
    now = start
    while now < start + seconds:
        verdict = pace.admit(size, now)
        if verdict.drop:
            return now, True
        now += max(verdict.wait_s, 0.001)
    return now, False


def test_a_peer_sending_as_fast_as_it_is_let_is_dropped_after_the_delay() -> None:
    pace = PeerPace(frames_per_s=20, bytes_per_min=1e9, drop_after_s=3)
    dropped_at, dropped = flood(pace, 0.0, 60.0)
    assert dropped
    burst = 2.0  # the first two seconds' worth pass at once
    assert 3.0 <= dropped_at <= 3.0 + burst + 0.5


def test_a_peer_that_pauses_between_bursts_is_slowed_but_never_dropped() -> None:
    pace = PeerPace(frames_per_s=20, bytes_per_min=1e9, drop_after_s=3)
    now = 0.0
    for _ in range(30):  # 60 frames at once, then a rest longer than the burst
        for _ in range(60):
            verdict = pace.admit(10, now)
            assert not verdict.drop
            now += verdict.wait_s
        now += 2.5
    assert pace.admit(10, now).wait_s == 0.0  # rested: the next frame passes at once
    assert not pace.held


def test_bytes_beyond_the_minute_slow_a_peer_but_never_drop_it() -> None:
    pace = PeerPace(frames_per_s=1000, bytes_per_min=60_000, drop_after_s=3)
    assert pace.admit(60_000, 0.0).wait_s == 0.0  # a whole minute's worth at once
    verdict = pace.admit(1_000, 0.0)
    assert verdict.wait_s == pytest.approx(1.0) and not verdict.drop
    now = 1.0
    for _ in range(600):  # ten minutes at the byte cap
        verdict = pace.admit(1_000, now)
        assert not verdict.drop
        now += verdict.wait_s
    assert now == pytest.approx(601.0, rel=0.01)


def test_a_weighted_frame_takes_that_many_frames_of_the_budget() -> None:
    pace = PeerPace(frames_per_s=200, bytes_per_min=1e9, drop_after_s=10)
    waits = [pace.admit(10, 0.0, weight=50).wait_s for _ in range(10)]
    assert waits[:8] == [0.0] * 8  # the 2 s burst holds 400 frames: eight such requests
    assert waits[8] == pytest.approx(0.25) and waits[9] == pytest.approx(0.5)


def test_under_a_cap_whose_burst_is_below_one_vector_a_rested_peer_still_sends_one_at_once() -> (
    None
):
    """At 20 frames a second the burst holds 40, less than a Vector weighs: a peer's Vector at
    each reconnect held it back, and its honest traffic after kept it held until it was
    dropped. A frame weighs at most the whole burst, so a rested peer's Vector always passes,
    and one repeating Vectors is still held to one per burst."""
    pace = PeerPace(frames_per_s=20, bytes_per_min=1e9, drop_after_s=3)
    assert pace.admit(10, 0.0, weight=VECTOR_WEIGHT).wait_s == 0.0
    assert not pace.held
    assert pace.admit(10, 0.0, weight=VECTOR_WEIGHT).wait_s == pytest.approx(2.0)


def test_a_vector_weighs_more_than_any_other_frame() -> None:
    assert frame_weight(encode_message(Vector({}))) == VECTOR_WEIGHT > 1
    assert frame_weight(encode_message(Vector({"a" * 32: 7}))) == VECTOR_WEIGHT
    assert frame_weight(encode_message(ErrorMessage("timeout", "no"))) == 1
    assert frame_weight(b"") == frame_weight(b"\x93\x02") == 1
