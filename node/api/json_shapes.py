"""JSON output a reader can use as it is: ``entities`` as a JSON array (issue 15, item 6).

An episode stores its entities as a JSON list inside a text column (that is what replicates,
and what ``memory export`` writes, byte for byte). Printed by ``--json`` it used to be a JSON
string holding JSON (``"entities": "[\\"Alice\\"]"``), which every reader had to decode twice.
The HTTP API answers the same shape as the CLI's ``--json`` (DESIGN §6), so both go through
:func:`readable`; rows inside the node, the log and the export keep the stored text.
"""

from __future__ import annotations

import json

__all__ = ["JsonObject", "readable", "readable_schema"]

JsonObject = dict[str, object]
"""A JSON object as the API writes it (an OpenAPI document or one of its schemas): its values
are JSON values, read back only by encoding them."""

_ENTITIES = {"type": "array", "items": {"type": "string"}}


def readable(value: object) -> object:
    """``value`` with every ``entities`` string that holds a JSON list decoded into the list."""
    if isinstance(value, dict):
        return {key: _entities(item) if key == "entities" else readable(item)
                for key, item in value.items()}  # fmt: skip
    if isinstance(value, list | tuple):
        return [readable(item) for item in value]
    return value


def readable_schema(components: dict[str, JsonObject]) -> dict[str, JsonObject]:
    """The schemas of what :func:`readable` makes of answers of ``components``: an
    ``entities`` text becomes the JSON array it holds (node/api/schema.py describes the API's
    answers with it, since the API answers through :func:`readable`)."""
    shown = {}
    for name, schema in components.items():
        properties = schema.get("properties")
        if isinstance(properties, dict) and properties.get("entities") == {"type": "string"}:
            schema = {**schema, "properties": {**properties, "entities": dict(_ENTITIES)}}
        shown[name] = schema
    return shown


def _entities(item: object) -> object:
    if not isinstance(item, str):
        return readable(item)
    try:
        decoded = json.loads(item)
    except json.JSONDecodeError:
        return item
    return decoded if isinstance(decoded, list) else item
