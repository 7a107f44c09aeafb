"""A number of seconds read from an environment variable, for one shell, a script or a test.

Two knobs are environment variables as well as (or instead of) settings: the resident's idle
time (``FERAL_RESIDENT_IDLE_S``, node/home/resident_runtime.py), which a script or a test suite sets
for the commands it runs, and anti-entropy's interval (``FERAL_ANTI_ENTROPY_S``,
node/serve/service.py), which only tests need. Both are read the same way: unset means the default;
anything but a finite number within the bounds is refused with a line that names the variable.
Standard library only, so a command checks it before loading anything.
"""

from __future__ import annotations

import math
import os

from feral.sync.errors import ConfigError

__all__ = ["env_seconds"]


def env_seconds(name: str, default: float, *, least: float, most: float, zero: bool) -> float:
    """``$name`` as seconds, or ``default`` when it is unset.

    Args:
        least, most: the bounds, inclusive; ``least`` itself is refused unless ``zero`` (a
            bound of 0 that means "none", where 0 is allowed).

    Raises:
        ConfigError: the value is not a number within the bounds.
    """
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    above = seconds >= least if zero else seconds > least
    if not (above and seconds <= most):
        lowest = f"from {least:g}" if zero else f"above {least:g}"
        raise ConfigError(f"{name} must be a number of seconds {lowest} to {most:g}, got {raw!r}")
    return seconds
