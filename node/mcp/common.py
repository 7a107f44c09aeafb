"""What every MCP tool module shares (node/mcp/tools_*.py): the annotations, argument checking,
the translation of a refusal into the tool error the model reads, and the answer's schema each
tool advertises (:func:`add_tool`, node/mcp/outputs.py).

The annotations say what a call may do to the memory, for a client deciding what to allow
without asking:

- :data:`READ_ONLY`: reads; nothing is written.
- :data:`WRITES`: adds to the memory; calling twice may add twice (or classify the second as a
  duplicate), so it is not idempotent.
- :data:`IDEMPOTENT`: sets a state; calling twice with the same arguments leaves what once did.
- :data:`DESTRUCTIVE`: takes something out of what search and lists show (undoable, but a
  client should ask first).

None is open-world: the tools touch only this home's memory, never the network (a ``serve``
pushing writes to paired peers is replication of the same memory, not a call out).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeAlias, TypeVar, cast

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import ToolAnnotations

from feral.node.api.bodies import fit
from feral.node.api.errors import ApiError
from feral.node.api.json_shapes import readable
from feral.sync.errors import FeralError

from .outputs import structured

__all__ = [
    "DESTRUCTIVE",
    "IDEMPOTENT",
    "READ_ONLY",
    "WRITES",
    "Server",
    "add_tool",
    "given",
    "refusal_text",
    "resource_errors",
]

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
IDEMPOTENT = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
DESTRUCTIVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
F = TypeVar("F", bound=Callable[..., Awaitable[object]])
S = TypeVar("S")
Server: TypeAlias = MCPServer[dict[str, object]]
"""The server the tools and resources are registered on (its lifespan context is the SDK's
default, an empty dict)."""


def refusal_text(exc: ApiError | FeralError) -> str:
    """The message of a refusal: a bad argument, an unknown id, a secret."""
    if isinstance(exc, ApiError):
        return exc.message
    return f"{exc.code}: {exc}"


class _Tool:
    """A tool's function as the SDK registers it: a refusal becomes the tool error the model
    reads, never a traceback; and the answer type the function declares is shown to the SDK as
    :func:`~feral.node.mcp.outputs.structured` of it, so the tool advertises that type's schema
    and answers the plain dict the function returns, read as the API answers it (an episode's
    ``entities`` text as the list it holds: node/api/json_shapes.py)."""

    def __init__(self, fn: Callable[..., Awaitable[object]]) -> None:
        self._fn = fn
        signature = inspect.signature(fn, eval_str=True)
        answer = structured(signature.return_annotation)
        self.__signature__ = signature.replace(return_annotation=answer)
        self.__name__ = fn.__name__.rstrip("_")
        self.__doc__ = fn.__doc__

    async def __call__(self, **arguments: object) -> object:
        try:
            return readable(await self._fn(**arguments))
        except (ApiError, FeralError) as exc:
            raise ToolError(refusal_text(exc)) from None


def resource_errors(fn: F) -> F:
    """A refusal while reading a resource (no such page) as the SDK's resource error."""

    @functools.wraps(fn)
    async def call(*args: object, **kwargs: object) -> object:
        try:
            return await fn(*args, **kwargs)
        except (ApiError, FeralError) as exc:
            raise ResourceError(refusal_text(exc)) from None

    return cast(F, call)


def given(type_: type[S], **arguments: object) -> S:
    """The arguments left out dropped (their defaults apply), the rest checked as the API does
    (node/api/bodies.py's :func:`fit`, so the limits and messages are the API's)."""
    return fit({k: v for k, v in arguments.items() if v is not None}, type_, top="the arguments")


def add_tool(
    server: Server, fn: Callable[..., Awaitable[object]], annotations: ToolAnnotations
) -> None:
    """Register ``fn`` under its name (a trailing ``_``, which dodges a Python name, dropped),
    advertising the schema of the answer type it declares."""
    tool = _Tool(fn)
    server.add_tool(tool, name=tool.__name__, annotations=annotations)
