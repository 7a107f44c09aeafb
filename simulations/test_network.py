"""The simulated network and clocks themselves: FIFO links, faults, partitions, topologies."""

from __future__ import annotations

import pytest

from feral.sync.types import NodeId

from .cluster import edges_for
from .network import EOF, ManualClock, SimNetwork, SimTime

A, B = NodeId("a" * 32), NodeId("b" * 32)


@pytest.fixture
def network() -> SimNetwork:
    network = SimNetwork()
    network.open(A, B)
    network.send((A, B), [b"1", b"2", b"3"])
    return network


def test_a_link_delivers_in_order_and_only_its_own_frames(network: SimNetwork) -> None:
    network.send((B, A), [b"x"])
    assert network.busy_links() == [(A, B), (B, A)]
    assert [network.pop((A, B)) for _ in range(3)] == [b"1", b"2", b"3"]
    assert network.busy_links() == [(B, A)]


def test_hostile_faults_act_on_the_oldest_frames(network: SimNetwork) -> None:
    network.duplicate((A, B))
    network.reorder((A, B))
    network.drop((A, B))
    assert [network.pop((A, B)) for _ in range(3)] == [b"1", b"2", b"3"]


def test_hostile_faults_never_touch_the_end_of_the_connection() -> None:
    network = SimNetwork()
    network.open(A, B)
    network.send((A, B), [EOF])
    network.drop((A, B))
    network.duplicate((A, B))
    assert network.pop((A, B)) is EOF and network.busy_links() == []


def test_a_partition_loses_what_was_in_flight_and_forbids_reconnecting(network: SimNetwork) -> None:
    network.partition(A, B)
    assert network.busy_links() == [] and network.connection(A, B) is None
    with pytest.raises(ValueError):
        network.open(A, B)
    network.send((A, B), [b"lost"])  # writing to a dead socket loses the frame
    network.heal(B, A)
    assert network.open(A, B).idle


def test_a_clock_is_shared_time_plus_its_own_skew() -> None:
    time = SimTime(1_000)
    clock = ManualClock(time, skew_ms=-5)
    time.advance(10)
    assert clock() == 1_005
    with pytest.raises(ValueError):
        time.advance(-1)


def test_the_chain_puts_the_server_between_the_phone_and_the_laptop() -> None:
    assert edges_for("chain", 3) == [(1, 0), (0, 2)]
    assert edges_for("star", 4) == [(0, 1), (0, 2), (0, 3)]
    assert len(edges_for("mesh", 5)) == 10
