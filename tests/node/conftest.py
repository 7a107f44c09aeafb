"""Fixtures shared by the API tests: one node, served on a free loopback port, and a client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from feral.node.node import Node

from .support import Mesh
from .test_api import Api, api_for


@pytest.fixture
async def mesh(tmp_path: Path) -> AsyncIterator[Mesh]:
    mesh = Mesh(tmp_path)
    mesh.add("a")
    yield mesh
    await mesh.aclose()


@pytest.fixture
async def node(mesh: Mesh) -> Node:
    return await mesh.open("a")


@pytest.fixture
async def api(node: Node) -> AsyncIterator[Api]:
    async with api_for(node) as client:
        yield client
