from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, strategies as st

from feral.sync.ids import fact_id, new_ulid, normalise
from feral.sync.schema import FACTS

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")
MAX_MS = (1 << 48) - 1

times = st.integers(0, MAX_MS)
randoms = st.binary(min_size=10, max_size=10)
words = st.text(
    st.characters(exclude_categories=["Cs", "Zs", "Cc", "Zl", "Zp"], exclude_characters="ı\u0345"),
    min_size=1,
    max_size=8,
)
"""Whitespace-free text, without the two characters whose case pairs fold apart: dotless 'ı'
(upper-cases to 'I', which folds to 'i') and the combining ypogegrammeni U+0345 (a combining
mark whose upper case is the letter 'Ι', so upper-casing it reorders it against its neighbours)."""
whitespace = st.text(st.sampled_from(" \t\n\r\x0b\x0c\u00a0\u2003\u3000"), min_size=1, max_size=3)


def decode_ulid_time(ulid: str) -> int:
    value = 0
    for char in ulid:
        value = value * 32 + CROCKFORD.index(char)
    return value >> 80


# new_ulid


@given(times, randoms)
def test_a_ulid_is_26_crockford_characters(now_ms, random80):
    assert ULID.fullmatch(new_ulid(now_ms, random80))


@given(times, randoms)
def test_a_ulid_carries_its_time_in_the_first_48_bits(now_ms, random80):
    assert decode_ulid_time(new_ulid(now_ms, random80)) == now_ms


def test_a_ulid_matches_the_spec_example_time_prefix():
    # The ULID spec's example id 01ARZ3NDEKTSV4RRFFQ69G5FAV starts with 1469922850259 ms.
    assert new_ulid(1469922850259, bytes(10)).startswith("01ARZ3NDEK")


def test_the_smallest_and_largest_ulids():
    assert new_ulid(0, bytes(10)) == "0" * 26
    assert new_ulid(MAX_MS, b"\xff" * 10) == "7" + "Z" * 25


@given(times, times, randoms, randoms)
def test_ulids_sort_by_time_whatever_their_random_part(t1, t2, r1, r2):
    if t1 < t2:
        assert new_ulid(t1, r1) < new_ulid(t2, r2)


@given(times, randoms, randoms)
def test_ulids_of_one_millisecond_sort_by_their_random_part(now_ms, r1, r2):
    assert (new_ulid(now_ms, r1) < new_ulid(now_ms, r2)) == (r1 < r2)


@pytest.mark.parametrize("size", [0, 9, 11, 16])
def test_new_ulid_refuses_a_random_part_of_the_wrong_length(size):
    with pytest.raises(ValueError, match="10 random bytes"):
        new_ulid(0, bytes(size))


# normalise and fact_id


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  Alice   LIKES\ttea\n", "alice likes tea"),
        ("Straße", "strasse"),
        ("Cafe\u0301", "café"),
        ("\u3000x\u00a0y\u2003", "x y"),
        ("", ""),
    ],
)
def test_normalise_folds_case_composes_and_collapses_whitespace(text, expected):
    assert normalise(text) == expected


@given(st.text(st.characters(exclude_categories=["Cs"])))
def test_normalise_is_idempotent(text):
    assert normalise(normalise(text)) == normalise(text)


def test_a_fact_id_is_f_and_31_hex_digits_and_fits_the_id_column():
    row_id = fact_id("Alice", "likes", "tea")
    assert re.fullmatch(r"f[0-9a-f]{31}", row_id)
    FACTS.columns[0].check(row_id)


def test_a_fact_id_is_stable_across_releases():
    # Pinned: changing the normalisation changes every fact's id on every device.
    assert fact_id("Alice", "likes", "tea") == "fd6a70bcbf5d45f5844fa8e39dd00b5a"


@given(st.tuples(*[st.text(st.characters(exclude_categories=["Cs"]))] * 3))
def test_a_fact_id_is_equal_for_nfc_and_nfd_spellings(triple):
    nfc = [unicodedata.normalize("NFC", part) for part in triple]
    nfd = [unicodedata.normalize("NFD", part) for part in triple]
    assert fact_id(*nfc) == fact_id(*nfd) == fact_id(*triple)


@given(st.lists(words, min_size=1, max_size=4))
def test_a_fact_id_is_equal_for_case_variants(parts):
    text = " ".join(parts)
    expected = fact_id(text, "is", "x")
    assert fact_id(text.upper(), "IS", "X") == expected
    assert fact_id(text.lower(), "Is", "x") == expected
    assert fact_id(text.casefold(), "iS", "X") == expected


@pytest.mark.parametrize(
    "text",
    ["\u0390", "\u03b0", "\u1fd3", "\u1fb7", "\u1ff7", "ǰ", "ŉ", "ﬀ", "İstanbul"],
)
def test_a_fact_id_is_equal_for_case_variants_that_fold_into_combining_marks(text):
    variants = {text, text.upper(), text.lower(), text.casefold(), text.title()}
    variants |= {unicodedata.normalize(form, v) for v in variants for form in ("NFC", "NFD")}
    assert len({fact_id(v, "p", "o") for v in variants}) == 1


@given(st.lists(words, min_size=1, max_size=4), st.data())
def test_a_fact_id_is_equal_for_whitespace_variants(parts, data):
    gaps = [data.draw(whitespace) for _ in range(len(parts) + 1)]
    spaced = gaps[0] + "".join(p + g for p, g in zip(parts, gaps[1:], strict=True))
    assert fact_id(spaced, "p", "o") == fact_id(" ".join(parts), "p", "o")


@given(st.lists(words, min_size=1, max_size=4), st.lists(words, min_size=1, max_size=4))
def test_a_fact_id_differs_for_different_content(a, b):
    if normalise(" ".join(a)) != normalise(" ".join(b)):
        assert fact_id(" ".join(a), "p", "o") != fact_id(" ".join(b), "p", "o")


def test_a_fact_id_keeps_its_three_parts_apart():
    ids = {
        fact_id("alice likes", "tea", "x"),
        fact_id("alice", "likes tea", "x"),
        fact_id("alice", "likes", "tea x"),
        fact_id("tea", "likes", "alice"),
    }
    assert len(ids) == 4


def test_a_separator_inside_a_part_is_whitespace_and_cannot_forge_a_boundary():
    assert fact_id("a\x1fb", "c", "d") == fact_id("a b", "c", "d")
    assert fact_id("a\x1fb", "c", "d") != fact_id("a", "b", "c\x1fd")


def test_a_fact_with_a_lone_surrogate_is_a_clear_schema_error():
    from feral.sync.errors import SchemaError

    with pytest.raises(SchemaError, match="not valid Unicode"):
        fact_id("bad \udcff byte", "is", "text")
