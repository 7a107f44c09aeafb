from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from feral.sync.errors import ClockError, ClockSkewError
from feral.sync.hlc import (
    COUNTER_BITS,
    COUNTER_MASK,
    DEFAULT_MAX_DRIFT_MS,
    MAX_PACKED,
    HybridClock,
    Timestamp,
    check_skew,
    delta_limit_ms,
    pack,
    unpack,
)
from feral.sync.types import NodeId

from .strategies import node_ids

NODE = NodeId("a" * 32)
PEER = NodeId("b" * 32)
ORIGIN = NodeId("c" * 32)
SECOND = 1000
DRIFT = 300 * SECOND
"""The drift limit these tests give their clocks (the default is looser; see its own tests)."""
BUMP = 288 * SECOND
"""A large jump of the physical clock, just inside ``DRIFT``: two in a row go past it."""
NOW = 1_700_000_000_000
MAX_WALL = MAX_PACKED >> COUNTER_BITS

walls = st.integers(0, MAX_WALL)
counters = st.integers(0, COUNTER_MASK)


class ManualClock:
    """A physical clock that moves only when told to."""

    def __init__(self, now: int = NOW) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def make_clock(
    now: int = NOW, last: int = 0, max_drift_ms: int = DRIFT
) -> tuple[HybridClock, ManualClock]:
    physical = ManualClock(now)
    return HybridClock(NODE, physical, last=last, max_drift_ms=max_drift_ms), physical


# pack / unpack


@given(walls, counters)
def test_pack_then_unpack_returns_the_reading(wall_ms, counter):
    assert unpack(pack(wall_ms, counter)) == (wall_ms, counter)


@given(st.tuples(walls, counters), st.tuples(walls, counters))
def test_packed_stamps_sort_like_their_readings(a, b):
    assert (pack(*a) < pack(*b)) == (a < b)
    assert (pack(*a) == pack(*b)) == (a == b)


def test_the_largest_reading_packs_to_the_largest_packed_value():
    assert pack(MAX_WALL, COUNTER_MASK) == MAX_PACKED


@pytest.mark.parametrize("counter", [-1, COUNTER_MASK + 1])
def test_pack_refuses_a_counter_outside_sixteen_bits(counter):
    with pytest.raises(ClockError, match="counter"):
        pack(NOW, counter)


@pytest.mark.parametrize("wall_ms", [-1, MAX_WALL + 1])
def test_pack_refuses_a_wall_time_out_of_range(wall_ms):
    with pytest.raises(ClockError, match="wall time"):
        pack(wall_ms, 0)


# Timestamp


@given(walls, counters, node_ids, walls, counters, node_ids)
def test_timestamp_order_is_wall_then_counter_then_node(w1, c1, n1, w2, c2, n2):
    a, b = Timestamp(w1, c1, n1), Timestamp(w2, c2, n2)
    assert (a < b) == ((w1, c1, n1) < (w2, c2, n2))
    assert (a == b) == ((w1, c1, n1) == (w2, c2, n2))


def test_a_later_stamp_wins_over_a_higher_node_id():
    assert Timestamp(NOW, 0, NodeId("a" * 32)) > Timestamp(NOW - 1, COUNTER_MASK, NodeId("z" * 32))


def test_equal_readings_are_ordered_by_node_id():
    assert Timestamp(NOW, 5, NodeId("a" * 32)) < Timestamp(NOW, 5, NodeId("b" * 32))


@given(walls, counters, node_ids)
def test_timestamp_round_trips_through_its_packed_form(wall_ms, counter, node_id):
    stamp = Timestamp(wall_ms, counter, node_id)
    assert Timestamp.from_packed(stamp.packed, node_id) == stamp


def test_timestamp_packed_refuses_an_out_of_range_counter():
    with pytest.raises(ClockError):
        _ = Timestamp(NOW, COUNTER_MASK + 1, NODE).packed


def test_clock_timestamp_names_the_clock_owner():
    clock, _ = make_clock()
    assert clock.timestamp(pack(NOW, 3)) == Timestamp(NOW, 3, NODE)


# tick


clock_steps = st.one_of(
    st.integers(-5, 5),
    st.sampled_from([-BUMP, BUMP]),
    st.integers(-BUMP, BUMP),
)


@settings(max_examples=120)
@given(steps=st.lists(clock_steps, max_size=60))
def test_tick_is_strictly_monotonic_under_any_physical_clock(steps):
    clock, physical = make_clock()
    previous = clock.last
    for step in steps:
        physical.now += step
        would_drift = ((previous + 1) >> COUNTER_BITS) - physical.now > DRIFT
        try:
            stamp = clock.tick()
        except ClockError:
            assert would_drift
            assert clock.last == previous
            continue
        assert not would_drift
        assert stamp > previous
        assert stamp >> COUNTER_BITS >= physical.now
        assert clock.last == stamp
        previous = stamp


def test_one_clock_bump_backwards_inside_the_drift_limit_keeps_ticking():
    clock, physical = make_clock()
    before = clock.tick()
    physical.now -= BUMP
    after = clock.tick()
    assert after == before + 1


def test_two_clock_bumps_backwards_exceed_the_drift_limit():
    clock, physical = make_clock()
    before = clock.tick()
    physical.now -= 2 * BUMP
    with pytest.raises(ClockError, match="ahead of its clock.*feral sync clock-reset"):
        clock.tick()
    assert clock.last == before
    physical.now += 2 * BUMP
    assert clock.tick() > before


@given(
    offset=st.integers(-(1 << 40), 10 * SECOND << COUNTER_BITS),
    steps=st.lists(st.integers(-BUMP, BUMP), min_size=1, max_size=10),
)
def test_tick_stamps_above_the_floor(offset, steps):
    clock, physical = make_clock()
    for step in steps:
        physical.now += step
        floor = max(0, (physical.now << COUNTER_BITS) + offset, clock.last - 7)
        previous = clock.last
        try:
            stamp = clock.tick(floor)
        except ClockError:
            assert clock.last == previous
            continue
        assert stamp > floor
        assert stamp > previous


def test_a_clock_without_a_drift_limit_uses_the_default():
    physical = ManualClock()
    clock = HybridClock(NODE, physical, last=pack(NOW + DEFAULT_MAX_DRIFT_MS, 0))
    assert clock.max_drift_ms == DEFAULT_MAX_DRIFT_MS
    assert clock.tick() == pack(NOW + DEFAULT_MAX_DRIFT_MS, 1)
    physical.now -= 1
    with pytest.raises(ClockError):
        clock.tick()


def test_tick_starts_at_the_physical_millisecond():
    clock, _ = make_clock()
    assert clock.tick() == pack(NOW, 0)


def test_tick_resumes_above_a_persisted_high_water_mark():
    clock, _ = make_clock(last=pack(NOW + 10, 4))
    assert clock.tick() == pack(NOW + 10, 5)


def test_tick_follows_the_physical_clock_forward():
    clock, physical = make_clock()
    clock.tick()
    physical.now += 3
    assert clock.tick() == pack(NOW + 3, 0)


def test_seventy_thousand_ticks_in_one_frozen_millisecond_are_unique_and_increasing():
    clock, _ = make_clock()
    stamps = [clock.tick() for _ in range(70_000)]
    assert all(a < b for a, b in zip(stamps, stamps[1:], strict=False))
    assert len(set(stamps)) == 70_000
    wall_ms, counter = unpack(stamps[-1])
    assert NOW < wall_ms <= NOW + 2  # the counter overflowed into the next millisecond...
    assert unpack(stamps[COUNTER_MASK]) == (NOW, COUNTER_MASK)
    assert unpack(stamps[COUNTER_MASK + 1]) == (NOW + 1, 0)  # ...and did not wrap to 0


def test_a_full_counter_borrows_the_next_millisecond():
    clock, _ = make_clock(last=pack(NOW, COUNTER_MASK))
    assert clock.tick() == pack(NOW + 1, 0)


def test_tick_accepts_logical_time_exactly_max_drift_ahead():
    clock, _ = make_clock(last=pack(NOW + 1000, 0), max_drift_ms=1000)
    assert clock.tick() == pack(NOW + 1000, 1)


def test_tick_refuses_to_run_logical_time_past_max_drift():
    last = pack(NOW + 1000, COUNTER_MASK)
    clock, _ = make_clock(last=last, max_drift_ms=1000)
    with pytest.raises(ClockError, match="1 s ahead"):
        clock.tick()
    assert clock.last == last


def test_tick_refuses_a_floor_beyond_max_drift():
    clock, _ = make_clock(max_drift_ms=1000)
    with pytest.raises(ClockError):
        clock.tick(pack(NOW + 1001, 0))
    assert clock.last == 0


def test_tick_refuses_a_physical_clock_beyond_the_packed_range():
    clock, _ = make_clock(now=MAX_WALL + 1)
    with pytest.raises(ClockError):
        clock.tick()
    assert clock.last == 0


# check_skew: received stamps may be up to twice the window ahead (delta_limit_ms)


@given(window=st.integers(0, 10**9), counter=counters)
def test_check_skew_accepts_a_stamp_exactly_twice_the_window_ahead(window, counter):
    check_skew(pack(NOW + delta_limit_ms(window), counter), NOW, window)


@given(window=st.integers(0, 10**9))
def test_check_skew_refuses_a_stamp_one_ms_past_twice_the_window(window):
    with pytest.raises(ClockSkewError) as excinfo:
        check_skew(pack(NOW + 2 * window + 1, 0), NOW, window, peer=PEER, origin=ORIGIN)
    assert excinfo.value.offset_ms == 2 * window + 1
    assert excinfo.value.window_ms == window
    assert excinfo.value.peer == PEER
    assert excinfo.value.origin == ORIGIN
    message = str(excinfo.value)
    assert f"written by {ORIGIN[:8]}, relayed by {PEER[:8]}" in message, message


def test_a_refusal_of_a_peers_own_stamp_names_it_once():
    with pytest.raises(ClockSkewError) as excinfo:
        check_skew(pack(NOW + 13 * 60_000, 0), NOW, 5 * 60_000, peer=PEER, origin=PEER)
    message = str(excinfo.value.named("laptop"))
    assert f"written by laptop ({PEER[:8]}) are stamped 13 min ahead" in message, message
    assert "relayed" not in message


def test_check_skew_accepts_stamps_behind_local_time():
    check_skew(pack(0, 0), NOW, 0)


# A received stamp never lifts the clock (issue 11): stamps follow the device's own clock, and
# a write to a row is stamped above that row's stored version through ``floor``. These replace
# the tests of ``observe``, which lifted the clock to every received stamp.


@given(offset=st.integers(1, BUMP), counter=counters)
def test_a_stamp_seen_from_a_faster_clock_does_not_lift_the_next_stamp(offset, counter):
    clock, _ = make_clock()
    remote = pack(NOW + offset, counter)
    check_skew(remote, NOW, BUMP)
    assert clock.tick() >> COUNTER_BITS == NOW < remote >> COUNTER_BITS


@given(offset=st.integers(-BUMP, BUMP), counter=counters)
def test_an_edit_of_a_row_stamped_by_any_clock_orders_after_that_version(offset, counter):
    clock, _ = make_clock()
    stored = pack(NOW + offset, counter)
    assert clock.tick(stored) > stored
