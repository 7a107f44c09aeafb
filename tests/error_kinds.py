"""The error tree as the installed package has it, for the tests of each edge that answers it.

sync/errors.py draws the tree (kinds and codes); the API (node/api/errors.py) and the CLI
(cli/context.py) each map it to their own answer. Their tests hold every kind found here to a
row written down in the test, so a kind added anywhere cannot be left unmapped by mistake.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TypeVar

from feral.sync.errors import FeralError

__all__ = ["LAYERS", "a_raised", "every_feral_error"]

LAYERS = ("feral.sync", "feral.storage", "feral.node", "feral.cli")
"""The packages whose modules may declare a kind."""

SKIPPED = {
    "feral.cli.__main__",  # running it is the command itself
    "feral.node.root",  # a development install also finds the package's own folder in node/
}

E = TypeVar("E", bound=FeralError)


def every_feral_error() -> list[type[FeralError]]:
    """Every class beneath FeralError in the package, each layer's modules imported first.

    Each layer is walked through its own ``__path__``: in a development (editable) install
    ``feral.__path__`` holds only the package's root folder, and a walk from there would import
    nothing, leaving out the kinds no test module happens to import.
    """
    for layer in LAYERS:
        package = importlib.import_module(layer)
        for module in pkgutil.walk_packages(package.__path__, f"{layer}."):
            if module.name not in SKIPPED:
                importlib.import_module(module.name)
    found: list[type[FeralError]] = []
    todo: list[type[FeralError]] = [FeralError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        # Only feral's own: a test may subclass one to make an error of its own.
        todo.extend(sub for sub in cls.__subclasses__() if sub.__module__.startswith("feral."))
    return found


def a_raised(kind: type[E], message: str) -> E:
    """An error of ``kind`` with ``message``, whatever its ``__init__`` takes (ClockSkewError
    builds its message from numbers)."""
    error = kind.__new__(kind)
    Exception.__init__(error, message)
    return error
