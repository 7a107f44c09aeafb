"""The secret scan (node/secrets/scan.py): what it finds, what it lets through, what it says."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import given, settings, strategies as st

from benchmarks.corpus import make_episodes, make_triples
from feral.node.api.errors import http_status
from feral.node.secrets.patterns import numbered_thing
from feral.node.secrets.scan import (
    SecretRefused,
    find_secret,
    refuse_secrets,
    refuse_triple,
    screen_lines,
    skipped_summary,
    triple_text,
)
from feral.sync.errors import InvalidInput

from .secret_samples import ALLOWED, GENERATORS, card_number, ordinary_texts, random_token

SUBSTRING = 8
"""No piece of a secret this long may appear in a refusal."""

# Ordinary words with spaces and punctuation, as memories are written; not the words that make
# a card-shaped number an identifier ("order", "id", "nr", ... inside a word too: see
# numbered_thing), which the look-alike tests cover.
words = st.lists(
    st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=9).filter(
        lambda word: not numbered_thing(f"{word} ", len(word) + 1, 0)
    ),
    min_size=0,
    max_size=12,
)
ordinary = words.map(" ".join)
generators = st.sampled_from(GENERATORS)


def pieces(secret: str, size: int = SUBSTRING) -> set[str]:
    """Every ``size``-character piece of the secret's value (phrasing words left out)."""
    value = secret.rsplit(" ", 1)[-1] if " " in secret and "-----" not in secret else secret
    return {value[i : i + size] for i in range(len(value) - size + 1)}


@settings(max_examples=400, deadline=None)
@given(before=ordinary, after=ordinary, generator=generators, seed=st.integers(0, 2**32))
@pytest.mark.slow
def test_a_generated_secret_inside_ordinary_text_is_always_refused(
    before: str, after: str, generator: tuple[str, object], seed: int
) -> None:
    kind, make = generator
    secret = make(random.Random(seed))  # type: ignore[operator]
    text = f"{before} {secret} {after}".strip()
    with pytest.raises(SecretRefused) as refused:
        refuse_secrets([text])
    message = str(refused.value)
    assert kind in message, (kind, message, text)
    assert message.count("\n") == 0
    assert not {p for p in pieces(secret) if p in message}, message


@settings(max_examples=300, deadline=None)
@given(ordinary)
def test_ordinary_words_are_never_refused(text: str) -> None:
    assert find_secret(text) is None, text


@pytest.mark.parametrize("text", ALLOWED)
def test_what_is_allowed_on_purpose(text: str) -> None:
    """Hashes, UUIDs, ULIDs, URLs, phone numbers and sentences about passwords."""
    assert find_secret(text) is None, find_secret(text)


def test_the_retrieval_benchmark_memories_and_queries_are_never_refused() -> None:
    texts = list(ordinary_texts())
    assert len(texts) > 500  # every memory and query of the benchmark, not a sample
    flagged = [(t, find_secret(t)) for t in texts if find_secret(t) is not None]
    assert flagged == []


def test_random_tokens_are_caught_by_entropy_at_the_rates_measured() -> None:
    """Seeded: base62 tokens with no provider prefix, caught only as random-looking."""
    rng = random.Random(14)
    caught = {
        size: sum(
            find_secret(f"key {random_token(rng, size)} here") is not None for _ in range(500)
        )
        for size in (20, 32, 40)
    }
    assert caught[20] >= 400 and caught[32] >= 470 and caught[40] >= 490, caught


def test_a_card_number_needs_a_valid_luhn_digit_and_a_network_prefix() -> None:
    rng = random.Random(3)
    good = card_number(rng)
    wrong = good[:-1] + str((int(good[-1]) + 1) % 10)
    assert find_secret(f"card {good}") is not None
    assert find_secret(f"card {wrong}") is None
    assert find_secret("order 1234567812345670 shipped") is None  # Luhn-valid, prefix 1
    assert find_secret("costs 8756 2549 2277 4091 9397 in total") is None  # a list of numbers


def test_a_triple_is_read_as_the_sentence_it_stands_for() -> None:
    with pytest.raises(SecretRefused, match="a password"):
        refuse_triple(("user", "wifi_password", "correct-horse-7"))
    with pytest.raises(SecretRefused, match="API key"):
        refuse_triple(("user", "api_key", "abc123def456ghi789"))
    refuse_triple(("user", "lives_in", "Porto"))


def test_the_refusal_is_an_invalid_input_answered_422_with_its_own_code() -> None:
    with pytest.raises(SecretRefused) as refused:
        refuse_secrets(["ghp_" + "a1B2" * 9])
    error = refused.value
    assert isinstance(error, InvalidInput)
    assert (error.code, http_status(type(error))) == ("secret_refused", 422)
    assert str(error) == (
        "refused: the text contains what looks like a GitHub token (never stored); "
        "remove it and try again"
    )


def test_screening_lines_refuses_at_the_first_or_skips_each() -> None:
    lines = [(1, "buy milk"), (3, "pw: Zebra-42-x"), (4, "call Ana"), (9, "AKIAABCDEFGHIJKLMNOP")]
    with pytest.raises(SecretRefused, match=r"^line 3: refused: .* a password .*--secrets skip"):
        screen_lines(lines, str, "refuse")
    kept, skipped = screen_lines(lines, str, "skip")
    assert (kept, skipped) == (["buy milk", "call Ana"], [3, 9])
    assert skipped_summary(skipped) == "skipped 2 line(s) holding what looks like a secret: 3, 9"
    many = skipped_summary(list(range(1, 31)))
    assert many.endswith("19, 20 and 10 more")


def test_the_benchmark_corpus_of_facts_and_episodes_is_never_refused() -> None:
    """The generated memories the benchmarks write (names, places, numbers, times)."""
    triples = [triple_text(t) for t in make_triples(5_000)]
    episodes = [text for text, _ in make_episodes(2_000)]
    assert [t for t in triples + episodes if find_secret(t) is not None] == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('{"password": "hunter2-Zq8#xv!Lp"}', "password"),
        ("{'note': 'my password is hunter2-Zq8#xv!Lp'}", "password"),
        ('{"args": {"pw": "Zq8xv!Lp44"}}', "password"),
        ('{"api_key": "Zq8xvLp2k3j4h5g6f7"}', "api_key"),
        ('{"token": "abcDEF123456ghiJKL"}', "api_key"),
        ('["login", {"passcode": "48213"}]', "password"),
    ],
)
def test_a_secret_inside_json_is_found_as_in_a_sentence(text: str, kind: str) -> None:
    """Tool calls are logged as JSON: a quoted key and a value before a closing bracket."""
    found = find_secret(text)
    assert found is not None and found.code == kind, (text, found)


@pytest.mark.parametrize(
    "text",
    [
        "my password for bob@gmail.com is Hunter22!",
        "Das WLAN-Passwort ist Tannenbaum77",
        "le code de la porte est 2580B",
        "mi PIN es 5678",
        "recovery phrase: legal winner thank year wave sausage worth useful legal winner thank "
        "yellow",
    ],
)
def test_credentials_as_people_write_them_are_refused(text: str) -> None:
    """From issue 24: each was stored before (the labelled set measures the rest)."""
    assert find_secret(text) is not None, text


@pytest.mark.parametrize(
    "text",
    [
        "my phone's IMEI is 356938035643809",
        "my password was compromised in the LinkedIn breach",
        "my PIN code is 560001, Bangalore",
        "my ssh public key is ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9o"
        "kWi0dh2l9GKJl bob@laptop",
        "order #4532015112830366 shipped today",
        "user stories / sprint12 board",  # a slash after "user" is no login / password
        "my login is bob1984 on the forum",  # a login names a user, not a password
    ],
)
def test_look_alikes_of_credentials_are_let_through(text: str) -> None:
    """From issue 24: the first five were refused before."""
    assert find_secret(text) is None, find_secret(text)


def test_a_card_number_after_a_numbering_word_is_refused_when_a_card_is_named_before_it() -> None:
    """``nr``/``no.``/``id`` before a card-shaped number make it an identifier (an order, an
    IMEI), unless the text names a card just before: that is a card number written out."""
    number = "4111 1111 1111 1111"
    refuse_secrets([f"order nr {number}"])  # an identifier: nothing refused
    for text in (f"my card nr {number}", f"Kreditkarte Nr. {number}", f"visa no. {number}"):
        with pytest.raises(SecretRefused):
            refuse_secrets([text])
