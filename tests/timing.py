"""Tests never fail on timing: hypothesis's clocks are turned off for the whole suite.

A pytest plugin (``-p tests.timing`` in pyproject.toml), so it applies to tests/ and
simulations/ alike. Hypothesis fails a test whose examples take over 200 ms each (``deadline``)
or whose inputs are slow to generate (the ``too_slow`` health check); both depend on how busy
the machine is, not on the code, and a suite run beside other work tripped them. A test that
names its own settings keeps them.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "feral",
    parent=settings.get_profile("default"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("feral")
