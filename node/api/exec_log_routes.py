"""The execution log's route in the API's style; node/api/schema.py documents it.

- ``POST /api/exec-log``  ``{"tool", "session", "args", "result", "latency_ms", "success"}``
  (``feral log record``): the stored entry, as ``feral log record --json`` prints it

Errors are the API's (node/api/routes.py): 400 a body that is not JSON, 422 a missing or invalid
field, or ``secret_refused`` when the entry holds what looks like a secret (nothing is stored).
"""

from __future__ import annotations

import msgspec
from starlette.requests import Request
from starlette.routing import BaseRoute, Route

from feral.node.assistant.exec_log import ToolCall, record_tool_call
from feral.storage.db.rows import ExecutionRow

from ..node import Node
from .bodies import read_json
from .endpoints import Wrap
from .json_shapes import JsonObject

__all__ = ["ExecLogApi", "exec_log_schemas"]

"""node/api/routes.py's ``_endpoint``: a handler answered as JSON, failures as JSON errors."""


class ExecLogApi:
    """The execution log's handlers for one node."""

    def __init__(self, node: Node) -> None:
        self.node = node

    def routes(self, endpoint: Wrap) -> list[BaseRoute]:
        return [Route("/api/exec-log", endpoint(self.record), methods=["POST"])]

    async def record(self, request: Request) -> ExecutionRow:
        call = await read_json(request, ToolCall)
        return await record_tool_call(self.node, call)


def exec_log_schemas(ref: str) -> JsonObject:
    """The request structure's JSON Schema, as msgspec makes it, for ``components``."""
    _, components = msgspec.json.schema_components((ToolCall,), ref_template=ref)
    return components
