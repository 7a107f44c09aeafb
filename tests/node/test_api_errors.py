"""How the API answers each kind of the error tree (node/api/errors.py's table).

The statuses are written down here, kind by kind, rather than read back from the table: a kind
added anywhere in the tree fails these tests until someone decides its status.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from starlette.requests import Request

from feral.node.api.errors import HTTP_STATUS, http_status
from feral.node.api.routes import _endpoint
from feral.sync.errors import FeralError, InvalidArgument, NotFoundError
from tests.error_kinds import a_raised, every_feral_error

STATUS_OF = {
    "FeralError": 400,
    "DecodeError": 400,
    "ProtocolError": 422,
    "SchemaError": 422,
    "ClockError": 400,
    "ClockSkewError": 400,
    "AuthError": 400,
    "ConfigError": 500,  # the node's own settings are at fault, not the request
    "InvalidArgument": 400,
    "InvalidInput": 422,
    "SecretRefused": 422,
    "NotAvailable": 409,
    "NotFoundError": 404,
    "PathRefused": 404,
    "HomeFileError": 500,  # the node's own files are at fault, not the request
    "ServeRefusal": 400,
    "StorageError": 500,  # the database failed: the request was not at fault
    "MigrationError": 500,
    "ModelUnavailable": 500,
    "CorruptDatabase": 500,
    "NewerDatabase": 500,
    "EmbeddingError": 500,
}
"""Each kind's status, as the API answered before the table moved out of sync/errors.py."""


def raised_by_a_route(error: FeralError) -> tuple[int, dict[str, Any]]:
    """The status and body a route answers when its handler fails with ``error``."""

    async def handler(request: Request) -> dict[str, Any]:
        raise error

    scope = {"type": "http", "method": "GET", "path": "/", "headers": [], "query_string": b""}
    response = asyncio.run(_endpoint(handler)(Request(scope)))
    return response.status_code, json.loads(bytes(response.body))


def test_every_kind_in_the_tree_has_its_status_written_down():
    assert sorted(kind.__name__ for kind in every_feral_error()) == sorted(STATUS_OF)


@pytest.mark.parametrize("kind", every_feral_error(), ids=lambda kind: kind.__name__)
def test_every_error_kind_is_answered_with_its_own_status_and_code(kind: type[FeralError]):
    status, body = raised_by_a_route(a_raised(kind, f"a {kind.__name__}"))
    assert status == http_status(kind) == STATUS_OF[kind.__name__]
    assert body == {"error": {"code": kind.code, "message": f"a {kind.__name__}"}}


def test_a_bad_argument_is_a_400_not_a_conflict():
    status, body = raised_by_a_route(InvalidArgument("mmr_lambda must be from 0 to 1, got 2"))
    assert (status, body["error"]["code"]) == (400, "invalid_argument")


def test_the_table_holds_a_kind_only_where_its_status_differs_from_its_parents():
    """One place per fact: a kind answered as its parent is has no row and inherits it."""
    assert FeralError in HTTP_STATUS
    for kind, status in HTTP_STATUS.items():
        if kind is not FeralError:
            assert status != http_status(kind.__mro__[1]), kind.__name__


def test_a_kind_without_a_row_is_answered_as_its_nearest_ancestor_with_one():
    class GoneMissing(NotFoundError):
        """A kind no table names (declared by this test)."""

    assert GoneMissing not in HTTP_STATUS
    assert raised_by_a_route(GoneMissing("no such page"))[0] == 404


def test_statuses_are_client_or_server_errors():
    assert all(400 <= status < 600 for status in HTTP_STATUS.values())
