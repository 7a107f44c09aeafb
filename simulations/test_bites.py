"""Proof that the simulations bite: each broken variant (broken.py) must be caught.

A variant is caught when the machine fails with an oracle's ``AssertionError`` (an invariant, a
convergence check, or ``sync_until_quiet`` running out of rounds) within :data:`BOUND`
examples. Generation is derandomized and shrinking is off, so each number is stable and the
test is quick; ``python -m simulations --bites`` prints how many examples and seconds each took.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest
from hypothesis import Phase, Verbosity
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from .broken import VARIANTS, Variant, patched
from .profiles import TOTALS, machine_settings
from .test_convergence import ConvergenceMachine
from .test_repair import RepairMachine
from .test_skewed_clocks import SkewedClocksMachine
from .test_store_agreement import StoreAgreementMachine

__all__ = ["BOUND", "Catch", "hunt"]

# Every variant runs its machine for up to BOUND examples, most for tens of seconds.
pytestmark = pytest.mark.slow

BOUND = 300
"""Most examples a variant may survive."""

MACHINES: dict[str, type[RuleBasedStateMachine]] = {
    "convergence": ConvergenceMachine,
    "agreement": StoreAgreementMachine,
    "repair": RepairMachine,
    "skew": SkewedClocksMachine,
}


@dataclass(frozen=True)
class Catch:
    """How a hunt for one variant ended."""

    variant: str
    caught: bool
    examples: int
    seconds: float
    message: str


def hunt(variant: Variant, bound: int = BOUND) -> Catch:
    """Run the variant's machine against the broken code until an oracle fails, or ``bound``."""
    options = machine_settings(
        "ci",
        variant.machine,
        max_examples=bound,
        derandomize=True,
        phases=[Phase.generate],
        print_blob=False,
        verbosity=Verbosity.quiet,
    )
    before = TOTALS["examples"]
    started = time.perf_counter()
    message, caught = "", False
    with patched(variant):
        try:
            run_state_machine_as_test(MACHINES[variant.machine], settings=options)
        except AssertionError as exc:
            caught = True
            message = (str(exc).strip() or type(exc).__name__).splitlines()[0][:200]
    examples = TOTALS["examples"] - before - (1 if caught else 0)  # the failure is replayed once
    return Catch(variant.name, caught, examples, time.perf_counter() - started, message)


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_the_simulation_catches_a_broken_variant(variant: Variant) -> None:
    catch = hunt(variant)
    assert catch.caught, f"{variant.name} survived {catch.examples} examples"
