from __future__ import annotations

import pytest

from feral.storage.db.errors import EmbeddingError, StorageError
from feral.sync import errors
from feral.sync.errors import (
    AuthError,
    ClockError,
    ClockSkewError,
    ConfigError,
    DecodeError,
    FeralError,
    HomeFileError,
    InvalidArgument,
    InvalidInput,
    NotAvailable,
    NotFoundError,
    PathRefused,
    ProtocolError,
    SchemaError,
)
from tests.error_kinds import every_feral_error


@pytest.mark.parametrize(
    ("error", "parent"),
    [
        (DecodeError, FeralError),
        (ProtocolError, FeralError),
        (SchemaError, ProtocolError),
        (ClockError, FeralError),
        (ClockSkewError, ClockError),
        (AuthError, FeralError),
        (ConfigError, FeralError),
        (NotFoundError, FeralError),
        (PathRefused, NotFoundError),
        (InvalidArgument, FeralError),
        (InvalidInput, FeralError),
        (NotAvailable, FeralError),
        (HomeFileError, FeralError),
        (EmbeddingError, StorageError),
    ],
)
def test_every_error_hangs_from_its_documented_parent(error, parent):
    assert error.__mro__[1] is parent


def test_feral_error_is_an_exception_but_not_a_value_or_key_error():
    assert issubclass(FeralError, Exception)
    assert not issubclass(FeralError, ValueError | KeyError | TypeError)


def test_every_exported_error_is_a_feral_error_drawn_in_the_module_docstring():
    assert errors.__doc__ is not None
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), FeralError)
        assert name in errors.__doc__


def test_clock_skew_error_names_offset_window_and_peer():
    error = ClockSkewError(10_001, 5000, peer="laptop")
    assert (error.offset_ms, error.window_ms, error.peer) == (10_001, 5000, "laptop")
    assert str(error) == (
        "clock skew: a stamp from laptop is 10 s ahead of this device's clock, "
        "more than twice max_clock_skew_ms (5 s)"
    )


def test_clock_skew_error_without_a_peer_says_nothing_about_one():
    error = ClockSkewError(10, 1)
    assert error.peer is None
    assert str(error) == (
        "clock skew: a stamp is 10 ms ahead of this device's clock, "
        "more than twice max_clock_skew_ms (1 ms)"
    )


def drawn_tree() -> dict[str, tuple[str | None, str]]:
    """The docstring's rows: each kind's parent and API code."""
    assert errors.__doc__ is not None
    block = errors.__doc__.split("::\n\n", 1)[1].split("\n\n", 1)[0]
    rows: dict[str, tuple[str | None, str]] = {}
    parents: list[str] = []
    for line in block.splitlines()[1:]:  # the first line holds the column names
        start = next(i for i, ch in enumerate(line) if ch.isalnum())
        depth = (start - 4) // 4
        name, code = line[start:].split()
        del parents[depth:]
        rows[name] = (parents[-1] if parents else None, code)
        parents.append(name)
    return rows


def test_the_drawn_tree_is_the_class_tree_with_each_classs_own_code():
    classes = {
        cls.__name__: (cls.__mro__[1].__name__ if cls is not FeralError else None, cls.code)
        for cls in every_feral_error()
    }
    assert classes == drawn_tree()


def test_a_kind_declares_its_code_only_where_it_differs_from_its_parents():
    """One place per fact: a subclass with its parent's code inherits it."""
    for cls in every_feral_error():
        if cls is FeralError or "code" not in vars(cls):
            continue
        assert cls.code != cls.__mro__[1].code, cls.__name__


def test_codes_are_lower_case_identifiers():
    for cls in every_feral_error():
        assert cls.code.isidentifier() and cls.code.islower(), cls


def test_the_core_says_what_went_wrong_not_how_the_api_or_the_cli_answer():
    """Statuses and exit codes are the edges' (node/api/errors.py, cli/context.py)."""
    for cls in every_feral_error():
        assert not {"http_status", "exit_code"} & set(dir(cls)), cls.__name__


def test_a_bad_argument_and_what_this_node_cannot_do_have_codes_of_their_own():
    assert InvalidArgument.code == "invalid_argument"
    assert NotAvailable.code == "not_available"
