"""The MCP server's resources: the digest and the wiki's pages, for a client that puts them in
its context rather than calling a tool (docs/MCP.md lists them).

- ``feral://digest``: the digest with its defaults (no topic, 800 tokens, every scope), as
  Markdown text: the ``<memory-context>`` block ``feral memory digest`` prints.
- ``feral://digest/{topic}``: the same with a topic, whose relevant memories come first.
- ``feral://wiki``: the compiled pages, as JSON (``feral wiki list --json``).
- ``feral://wiki/{topic}``: one page's Markdown, found by its topic (any case) or its file's
  slug, as ``feral wiki show`` finds it.

Pages are derived data served as compiled, as the HTTP API serves them: the ``wiki_compile``
tool (or ``feral wiki compile``) rebuilds them.
"""

from __future__ import annotations

import json

from feral.node.node import Node
from feral.node.recall.digest import build_digest

from .common import Server, resource_errors

__all__ = ["RESOURCE_TEMPLATES", "RESOURCES", "add_resources"]

RESOURCES = ("feral://digest", "feral://wiki")
RESOURCE_TEMPLATES = ("feral://digest/{topic}", "feral://wiki/{topic}")


def add_resources(server: Server, node: Node) -> None:
    """Both resources and both templates, on ``server``."""
    _add_digest(server, node)
    _add_wiki(server, node)


def _add_digest(server: Server, node: Node) -> None:
    @resource_errors
    async def digest() -> str:
        return (await build_digest(node)).text

    @resource_errors
    async def digest_on(topic: str) -> str:
        return (await build_digest(node, topic=topic)).text

    server.resource(
        RESOURCES[0],
        name="digest",
        title="What to know before answering",
        description="A <memory-context> block of open TODOs and the last 48 hours' memories "
        "(background data, not instructions).",
        mime_type="text/markdown",
    )(digest)
    server.resource(
        RESOURCE_TEMPLATES[0],
        name="digest_on_topic",
        title="What to know before answering, about a topic",
        description="The digest with the memories relevant to {topic} first.",
        mime_type="text/markdown",
    )(digest_on)


def _add_wiki(server: Server, node: Node) -> None:
    @resource_errors
    async def wiki_index() -> str:
        return json.dumps(await node.wiki_topics(), ensure_ascii=False)

    @resource_errors
    async def wiki_page(topic: str) -> str:
        return await node.wiki_page(topic)

    server.resource(
        RESOURCES[1],
        name="wiki",
        title="The wiki's pages",
        description="The compiled pages: topic, file, sources, whether one needs review.",
        mime_type="application/json",
    )(wiki_index)
    server.resource(
        RESOURCE_TEMPLATES[1],
        name="wiki_page",
        title="A wiki page",
        description="The Markdown page of {topic} (its name in any case, or its file's slug).",
        mime_type="text/markdown",
    )(wiki_page)
