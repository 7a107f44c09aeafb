"""JSON output a reader can use as it is: ``entities`` as a JSON array (issue 15, item 6).

An episode stores its entities as a JSON list inside a text column (that is what replicates,
and what ``memory export`` writes, byte for byte). Printed by ``--json`` it used to be a JSON
string holding JSON (``"entities": "[\\"Alice\\"]"``), which every reader had to decode twice.
The HTTP API answers the same shape as the CLI's ``--json`` (DESIGN §6), so both go through
:func:`readable`; rows inside the node, the log and the export keep the stored text.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["readable"]


def readable(value: Any) -> Any:
    """``value`` with every ``entities`` string that holds a JSON list decoded into the list."""
    if isinstance(value, dict):
        return {key: _entities(item) if key == "entities" else readable(item)
                for key, item in value.items()}  # fmt: skip
    if isinstance(value, list | tuple):
        return [readable(item) for item in value]
    return value


def _entities(item: Any) -> Any:
    if not isinstance(item, str):
        return readable(item)
    try:
        decoded = json.loads(item)
    except json.JSONDecodeError:
        return item
    return decoded if isinstance(decoded, list) else item
