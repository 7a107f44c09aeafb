from __future__ import annotations

import pytest

from feral.sync import errors
from feral.sync.errors import (
    AuthError,
    ClockError,
    ClockSkewError,
    ConfigError,
    DecodeError,
    FeralError,
    NotFoundError,
    ProtocolError,
    SchemaError,
)


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
    error = ClockSkewError(5001, 5000, peer="laptop")
    assert (error.offset_ms, error.window_ms, error.peer) == (5001, 5000, "laptop")
    assert str(error) == (
        "clock skew: a stamp from laptop is 5001 ms ahead of local time (max_clock_skew_ms is 5000)"
    )


def test_clock_skew_error_without_a_peer_says_nothing_about_one():
    error = ClockSkewError(10, 1)
    assert error.peer is None
    assert str(error) == "clock skew: a stamp is 10 ms ahead of local time (max_clock_skew_ms is 1)"
