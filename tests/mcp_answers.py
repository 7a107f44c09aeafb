"""What an MCP tool call answered, and what a tool says it answers, for the tests that drive the
server through the SDK's own clients: in process (tests/node/test_mcp_tools.py and
test_mcp_outputs.py) and over stdio (tests/cli/test_mcp_stdio.py).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

__all__ = ["ToolCaller", "assert_specific", "call", "refusal"]


class ToolCaller(Protocol):
    """The SDK's ``Client`` and ``ClientSession`` alike: what calls a tool."""

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any: ...


async def call(client: ToolCaller, tool: str, /, **arguments: Any) -> Any:
    """The tool's answer, decoded; a tool error fails the test with its message."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


async def refusal(client: ToolCaller, tool: str, /, **arguments: Any) -> str:
    """The text of the tool's refusal; an answer instead fails the test."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.content
    text: str = result.content[0].text
    return text


def assert_specific(name: str, schema: dict[str, Any] | None) -> None:
    """A tool's ``outputSchema`` names its answer's keys (an object, or a choice of objects):
    not "any object"."""
    assert schema is not None, f"{name} advertises no output schema"
    assert schema.get("type") == "object", name
    for shape in schema.get("anyOf", [schema]):
        assert shape.get("properties") and shape.get("required"), (name, shape)
