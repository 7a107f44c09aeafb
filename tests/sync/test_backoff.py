"""sync/backoff.py: reconnect delays, with randomness injected."""

from __future__ import annotations

from itertools import islice

import pytest

from feral.sync.backoff import reconnect_delays


def take(n: int, **kwargs: float) -> list[float]:
    random = kwargs.pop("random", 1.0)
    return list(islice(reconnect_delays(lambda: random, **kwargs), n))


def test_delays_double_from_half_a_second_with_full_jitter_at_one() -> None:
    assert take(5) == [0.5, 1.0, 2.0, 4.0, 8.0]


def test_delays_are_halved_when_the_random_draw_is_zero() -> None:
    assert take(5, random=0.0) == [0.25, 0.5, 1.0, 2.0, 4.0]


def test_delays_stop_growing_at_the_maximum() -> None:
    delays = take(12)
    assert delays[:8] == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0]
    assert delays[8:] == [60.0] * 4
    assert take(12, random=0.0)[-1] == 30.0


def test_initial_factor_and_maximum_can_be_chosen() -> None:
    assert take(5, initial=1.0, factor=3.0, maximum=20.0) == [1.0, 3.0, 9.0, 20.0, 20.0]


@pytest.mark.parametrize("draw", [0.0, 0.1, 0.5, 0.99, 1.0])
def test_each_delay_lies_between_half_and_all_of_its_step(draw: float) -> None:
    steps = take(10)
    for step, delay in zip(steps, take(10, random=draw), strict=True):
        assert step / 2 <= delay <= step
        assert delay == pytest.approx(step * (0.5 + draw / 2))


def test_every_delay_takes_a_fresh_random_draw() -> None:
    draws = iter([0.0, 1.0, 0.0, 1.0])
    delays = list(islice(reconnect_delays(lambda: next(draws)), 4))
    assert delays == [0.25, 1.0, 1.0, 4.0]


def test_the_generator_never_ends() -> None:
    delays = reconnect_delays(lambda: 0.5)
    assert len(list(islice(delays, 1000))) == 1000
