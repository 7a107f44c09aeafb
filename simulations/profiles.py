"""Hypothesis settings for the simulations, and the counters a run reports.

Profiles (each is a total across the machines, split by :data:`SHARES`):

* ``ci``: 500 examples of up to 50 steps, split as :data:`SHARES` says (the convergence
  machine 400, each other one 100). ``python3 -m pytest`` runs it derandomized (the same
  examples every time, so a CI result is reproducible); ``python -m simulations --profile ci``
  runs it with a fresh seed, printed for replay. Depth is the ``long`` profile's job; CI must
  show that the machines bite, and test_bites.py holds each broken variant to being caught
  within its bound. When the budget was halved from 1,000, every convergence variant was
  caught within 400 examples on each of three or four random seeds; the repair machine keeps
  its 100 (one of its variants took 66 examples on a seed and over 300 on another).
* ``quick``: a quarter of that, for a fast local check (``FERAL_SIM_PROFILE=quick``).
* ``long``: ``python -m simulations --profile long --seconds S``, batches until time is up.

The profile for pytest is chosen with ``FERAL_SIM_PROFILE`` (default ``ci``). It is applied
to the machines only, never loaded globally, so the rest of the suite keeps its own settings.
"""

from __future__ import annotations

import os
from collections import Counter

from hypothesis import settings

__all__ = ["EXAMPLES", "SHARES", "STEPS", "TOTALS", "machine_settings", "pytest_settings"]

STEPS = 50
"""Most rule steps per example (hypothesis' ``stateful_step_count``)."""

EXAMPLES = {"quick": 125, "ci": 500, "long": 2_000}
"""Examples per run (for ``long``, per batch: batches of a few minutes repeat until
``--seconds`` is up, so a run may pass its bound by up to one batch)."""

SHARES = {"convergence": 0.8, "agreement": 0.2, "repair": 0.2, "skew": 0.2}
"""How a profile's examples are split between the machines."""

TOTALS: Counter[str] = Counter()
"""Examples, steps and nodes run in this process (``python -m simulations`` reports them)."""


def machine_settings(profile: str, machine: str, **overrides: object) -> settings:
    """The settings one machine runs with under ``profile``."""
    options: dict[str, object] = {
        "max_examples": max(1, round(EXAMPLES[profile] * SHARES[machine])),
        "stateful_step_count": STEPS,
        "deadline": None,  # an example opens real SQLite files: its time varies with the disk
        "print_blob": True,
        "report_multiple_bugs": False,
        "database": None,  # replay is by --seed (or the printed blob), never by a local file
    }
    options.update(overrides)
    return settings(**options)  # type: ignore[arg-type]


def pytest_settings(machine: str) -> settings:
    """The suite runs the same examples every time (seeded runs are for ``python -m``)."""
    return machine_settings(os.environ.get("FERAL_SIM_PROFILE", "ci"), machine, derandomize=True)
