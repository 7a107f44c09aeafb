"""The one JSON parser and validator (node/settings/validation.py) that settings and the API
share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import pytest
from msgspec import Meta, Struct

from feral.node.settings.validation import Invalid, JsonRefused, convert, key_path, parse_json, show

Small = Annotated[int, Meta(ge=1, le=5)]


@dataclass(frozen=True)
class Inner:
    size: Small = 1


@dataclass(frozen=True)
class Outer:
    inner: Inner | None = None
    items: tuple[Inner, ...] = ()


class Lenient(Struct, frozen=True):
    size: Small = 1


class Strict(Struct, frozen=True, forbid_unknown_fields=True):
    size: Small = 1


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{"a": 1, "a": 2}', 'the key "a" appears twice in one object'),
        (b'{"a": NaN}', "invalid JSON: NaN is not a JSON number"),
        (b'{"a": -Infinity}', "invalid JSON: -Infinity is not a JSON number"),
        (b'{"a": \xff}', "not UTF-8 text (byte 6)"),
        (b'{"a": }', "invalid JSON at line 1, column 7: "),
        (b"[" * 100_000, "JSON nested too deeply"),
    ],
)
def test_the_parser_refuses_what_json_would_let_through_or_cannot_read(raw, expected):
    with pytest.raises(JsonRefused) as info:
        parse_json(raw)
    assert str(info.value).startswith(expected)


def test_the_parser_tolerates_a_byte_order_mark():
    assert parse_json(b'\xef\xbb\xbf{"a": [1, 2.5, null]}') == {"a": [1, 2.5, None]}


def test_a_failure_deep_inside_names_its_key_path_and_value():
    with pytest.raises(Invalid) as info:
        convert({"items": [{"size": 2}, {"size": 9}]}, Outer)
    assert str(info.value) == "items[1].size must be at most 5, got 9"
    assert info.value.path == ("items", 1, "size")


def test_a_dataclass_refuses_every_unknown_key_by_name():
    with pytest.raises(Invalid, match=r"^inner\.a, inner\.b are not known keys; inner takes size"):
        convert({"inner": {"a": 1, "b": 2}}, Outer)


def test_a_struct_refuses_unknown_keys_only_when_it_says_so():
    assert convert({"size": 2, "page": 3}, Lenient) == Lenient(2)
    with pytest.raises(Invalid, match="^page is not a known key; the top level takes size$"):
        convert({"size": 2, "page": 3}, Strict)


def test_strings_become_numbers_only_when_asked_for():
    assert convert({"size": "3"}, Lenient, from_strings=True) == Lenient(3)
    with pytest.raises(Invalid, match='^size must be a positive integer, got "3"$'):
        convert({"size": "3"}, Lenient)


def test_key_paths_and_shown_values_read_like_the_json():
    assert key_path(("sync", "peers", 0, "url")) == "sync.peers[0].url"
    assert show("\ud800") == '"\\ud800"'
    assert show("x" * 100) == '"' + "x" * 76 + "..."
    assert show(b"raw") == "b'raw'"
