"""Run the simulations outside pytest: ``python -m simulations --profile ci|long``.

Every run has a seed, printed first; ``--seed N`` replays it exactly (the machines are
deterministic, and nothing is read from an example database). A failure prints hypothesis'
shortest failing steps, its ``@reproduce_failure`` blob, and the command that replays it. The
last line is always one summary::

    examples=… steps=… nodes=… seconds=… failures=…

``--profile long --seconds S`` runs batches (each with its own seed) until ``S`` seconds have
passed. ``--bites`` instead reports how fast each broken variant (broken.py) is caught.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback

from hypothesis import seed as hypothesis_seed
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from .profiles import EXAMPLES, TOTALS, machine_settings
from .test_convergence import ConvergenceMachine
from .test_repair import RepairMachine
from .test_skewed_clocks import SkewedClocksMachine
from .test_store_agreement import StoreAgreementMachine

MACHINES: dict[str, tuple[type[RuleBasedStateMachine], str]] = {
    "convergence": (ConvergenceMachine, "convergence"),
    "agreement": (StoreAgreementMachine, "agreement"),
    "repair": (RepairMachine, "repair"),
    "skew": (SkewedClocksMachine, "skew"),
}
"""Name → (machine, the share of the profile's examples it runs)."""

DEFAULT_MACHINES = ("convergence", "agreement", "repair", "skew")


def run_machine(name: str, profile: str, seed: int, examples: int | None) -> bool:
    """Run one machine with ``seed``; returns whether it passed."""
    machine, share = MACHINES[name]
    seeded = hypothesis_seed(seed)(type(machine.__name__, (machine,), {}))
    options = machine_settings(profile, share)
    if examples is not None:
        options = machine_settings(profile, share, max_examples=examples)
    try:
        run_state_machine_as_test(seeded, settings=options)
    except Exception:  # noqa: BLE001 - any failure is reported with its seed, then counted
        traceback.print_exc()
        print(f"\nFAILED: {name} with seed {seed}. Replay it with:\n"
              f"  python -m simulations --profile {profile} --seed {seed} --machine {name}",
              flush=True)  # fmt: skip
        return False
    return True


def run_batch(names: list[str], profile: str, seed: int, examples: int | None) -> int:
    """Run each machine once with ``seed``; returns how many failed."""
    print(f"seed={seed} profile={profile} machines={','.join(names)}", flush=True)
    return sum(not run_machine(name, profile, seed, examples) for name in names)


def run_bites() -> int:
    from .broken import VARIANTS
    from .test_bites import hunt

    missed = 0
    for variant in VARIANTS:
        catch = hunt(variant)
        missed += not catch.caught
        print(f"{variant.name}: caught={catch.caught} after {catch.examples} examples "
              f"in {catch.seconds:.1f} s: {catch.message}", flush=True)  # fmt: skip
    return missed


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m simulations",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--profile", choices=sorted(EXAMPLES), default="ci")
    parser.add_argument("--seed", type=int, help="replay this seed (one batch)")
    parser.add_argument(
        "--seconds",
        type=float,
        default=3600.0,
        help="for --profile long: keep running batches this long",
    )
    parser.add_argument(
        "--machine",
        action="append",
        choices=sorted(MACHINES),
        help="run only this machine (repeatable)",
    )
    parser.add_argument("--examples", type=int, help="examples per machine (overrides)")
    parser.add_argument(
        "--bites", action="store_true", help="report how fast each broken variant is caught"
    )
    return parser.parse_args(argv)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    if args.bites:
        failures = run_bites()
    else:
        names = args.machine or list(DEFAULT_MACHINES)
        seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
        failures = run_batch(names, args.profile, seed, args.examples)
        while (
            args.profile == "long"
            and args.seed is None
            and not failures
            and (time.perf_counter() - started < args.seconds)
        ):
            seed = random.SystemRandom().randrange(2**32)
            failures += run_batch(names, args.profile, seed, args.examples)
    seconds = time.perf_counter() - started
    details = sorted((k, v) for k, v in TOTALS.items() if k not in ("examples", "steps", "nodes"))
    print("counts: " + " ".join(f"{k}={v}" for k, v in details), flush=True)
    print(f"examples={TOTALS['examples']} steps={TOTALS['steps']} nodes={TOTALS['nodes']} "
          f"seconds={seconds:.1f} failures={failures}", flush=True)  # fmt: skip
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
