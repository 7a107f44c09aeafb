"""The answers only the MCP tools give: a list wrapped in an object, since MCP's structured
content is an object (``list`` answers ``{"memories": [...]}`` where the API answers the list).
Every other tool answers a type of node/answers.py or its neighbours, as the API does.
"""

from __future__ import annotations

from typing import TypedDict

from feral.node.answers import ExecutionRow, ListedMemory, WikiTopic
from feral.node.recall.answers_graph import GraphEntity

__all__ = ["EntitiesListed", "LogEntries", "MemoriesListed", "WikiCompiled"]


class MemoriesListed(TypedDict):
    """``list``: the newest memories first."""

    memories: list[ListedMemory]


class LogEntries(TypedDict):
    """``log_list``: the logged tool calls, newest first."""

    entries: list[ExecutionRow]


class WikiCompiled(TypedDict):
    """``wiki_compile``: the pages written."""

    pages: list[WikiTopic]


class EntitiesListed(TypedDict):
    """``graph_list``: the entities with their attributes and conflicts."""

    entities: list[GraphEntity]
