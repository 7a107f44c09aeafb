"""What the secret scan looks for (node/secrets/scan.py): the detectors and their checks.

Each detector is a code, the kind people read (``an OpenAI API key``), a regular expression and a
check that confirms what the expression alone cannot decide (a Luhn digit, a value that is a
word of the sentence rather than a password), and the literals that must be in the text for it
to be tried at all. The scan compiles the expressions once.
Random-looking tokens are judged by :func:`random_looking` (entropy, character classes, and how
much of the token is made of word-like runs).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from typing import NamedTuple

__all__ = [
    "DETECTORS",
    "Detector",
    "Excuse",
    "ENTROPY_BITS",
    "ENTROPY_MARGIN",
    "MAX_WORD_SHARE",
    "MIN_RANDOM_TOKEN",
    "no_excuse",
    "numbered_thing",
    "random_looking",
]

ENTROPY_BITS = 4.3
"""The most Shannon entropy per character a long mixed token must show to count as random."""
ENTROPY_MARGIN = 0.75
"""For shorter tokens the bar is this far below log2(length), the most such a token can reach:
99 in 100 random 20-character base62 tokens lie above it (measured with the tests)."""
MAX_WORD_SHARE = 0.5
"""A token at least half made of word-like runs (``[A-Z]?[a-z]{3,}``) is a name, not a key."""
MIN_RANDOM_TOKEN = 20

Check = Callable[[str], bool]
Excuse = Callable[[str, int, int], bool]
"""``(text, start, end)``: whether what surrounds a match makes it no secret."""


def no_excuse(_text: str, _start: int, _end: int) -> bool:
    return False


class Detector(NamedTuple):
    """One kind of secret: how it is named, found and confirmed, and when to look for it;
    ``excused`` reads the whole text around a match (an order number is no card number)."""

    code: str
    kind: str
    pattern: str
    check: Check
    triggers: tuple[str, ...]
    excused: Excuse = no_excuse


def _always(_: str) -> bool:
    return True


def _letters_and_digits(token: str) -> bool:
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char) * (2 if index % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


_CARD_PREFIX = re.compile(r"2[2-7]|[3-6]")
"""The first digits of the card networks: Mastercard 2 and 5, Amex, Diners and JCB 3, Visa 4,
Discover, Maestro and UnionPay 6 (a number starting 1, 7, 8 or 9 is an id or a timestamp).
Fifteen digits are Amex's alone (34, 37): an IMEI is fifteen Luhn-valid digits too."""


def _card(text: str) -> bool:
    digits = re.sub(r"[ -]", "", text)
    if len(digits) == 15 and digits[:2] not in ("34", "37"):
        return False
    return 13 <= len(digits) <= 19 and bool(_CARD_PREFIX.match(digits)) and _luhn(digits)


_NUMBERED = re.compile(
    r"(?i:imei|order|tracking|invoice|ticket|serial|customer|reference|booking|confirmation|"
    r"employee|member|library|policy|account|iban|bestell|rechnung|kunden|commande|facture|"
    r"client|pedido|factura|\bid\b|\bnr\b|\bno\.)"
)


_CARD_WORD = re.compile(r"(?i:card|karte|carte|tarjeta|cartão|visa|mastercard|amex)")
"""A card named before the number: "card nr 4111 ..." is a card number, not an identifier."""


def numbered_thing(text: str, start: int, _end: int) -> bool:
    """A card-shaped number just after ``order``, ``IMEI``, ``id``...: an identifier, unless
    a card is named just before it."""
    window = max(0, start - 30)
    return bool(_NUMBERED.search(text, window, start)) and not _CARD_WORD.search(
        text, window, start
    )


def _entropy(token: str) -> float:
    counts = Counter(token).values()
    size = len(token)
    return -sum(n / size * math.log2(n / size) for n in counts)


def random_looking(token: str) -> bool:
    """Lower case, upper case and digits together, near-random, and not made of words.

    The entropy a token can reach grows with its length (at most log2 of it), so the bar is
    :data:`ENTROPY_MARGIN` below that, capped at :data:`ENTROPY_BITS`; and a token whose
    letters are mostly word-like runs (``MyVacationPhotos2024Album``) is a name, not a key.
    """
    core = token.strip("=-_")
    size = len(core)
    if size < MIN_RANDOM_TOKEN or not _three_classes(core):
        return False
    if _entropy(core) < min(ENTROPY_BITS, math.log2(size) - ENTROPY_MARGIN):
        return False
    return sum(len(word) for word in _WORDLIKE.findall(core)) < MAX_WORD_SHARE * size


def _three_classes(token: str) -> bool:
    lower = upper = digit = False
    for char in token:
        lower = lower or char.islower()
        upper = upper or char.isupper()
        digit = digit or char.isdigit()
    return lower and upper and digit


_WORDLIKE = re.compile(r"[A-Z]?[a-z]{3,}")


def _value(text: str) -> str:
    """The value at the end of a ``name is value`` / ``name: value`` match, unquoted."""
    closers = "\"'`.,;!?()[]{}"  # the end of a sentence, a quote, or JSON's brackets
    return _LAST.split(text.rstrip(closers))[-1].strip(closers)


def _key_value(text: str) -> bool:
    word = _value(text)
    return len(word) >= 12 and _letters_and_digits(word)


_CARD = r"(?<![\d.-])(?<!\d[ -])\d(?:[ -]?\d){12,18}(?![\d-])(?![ -]\d)"
"""13 to 19 digits, not part of a longer run of digit groups (a list of numbers is no card)."""
_LAST = re.compile(r"[\s:=\"'`]+")
_B = r"(?<![A-Za-z0-9_])"  # no letter, digit or underscore just before
_E = r"(?![A-Za-z0-9_])"  # nor just after
_K = r"(?<![A-Za-z0-9])"  # before a keyword: ``wifi_password=...`` names a password too
_IS = r"[\"'`]?(?:\s+(?:is|was)\s+|\s*[:=]\s*)(?:now\s+|still\s+)?[\"'`]?\S+"
"""``is``/``was``/``:``/``=``, then the value (a word, possibly quoted); the name may close a
quote first, as a key does in JSON (``{"password": "..."}``, how tool calls are logged)."""

# The check confirms a match the pattern alone cannot decide. The triggers are literals of
# which one must be in the text for the pattern to be tried at all ("~" first: in any case;
# "#": 13 digits or more): most text holds none, so most patterns are never run on it.
DETECTORS: tuple[Detector, ...] = (
    Detector(
        "private_key",
        "a private key",
        r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----",
        _always,
        ("PRIVATE KEY",),
    ),
    Detector(
        "anthropic_key",
        "an Anthropic API key",
        _B + r"sk-ant-[A-Za-z0-9_-]{20,}",
        _always,
        ("sk-ant-",),
    ),
    Detector(
        "openai_key",
        "an OpenAI API key",
        _B + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
        _letters_and_digits,
        ("sk-",),
    ),
    Detector(
        "aws_access_key",
        "an AWS access key ID",
        _B + r"(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}" + _E,
        _always,
        ("AKIA", "ASIA", "ABIA", "ACCA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "APKA"),
    ),
    Detector(
        "aws_secret_key",
        "an AWS secret access key",
        r"(?i:aws.{0,20}?secret.{0,20}?|secret[_ ]?access[_ ]?key)[\s\"':=]{1,6}"
        r"[A-Za-z0-9/+]{40}" + _E,
        _always,
        ("~secret",),
    ),
    Detector(
        "github_token",
        "a GitHub token",
        _B + r"gh[pousr]_[A-Za-z0-9]{36,}",
        _always,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    Detector(
        "github_token",
        "a GitHub token",
        _B + r"github_pat_[A-Za-z0-9_]{22,}",
        _always,
        ("github_pat_",),
    ),
    Detector(
        "gitlab_token",
        "a GitLab token",
        _B + r"gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,}",
        _always,
        ("glpat-", "gldt-", "glrt-", "glptt-"),
    ),
    Detector(
        "slack_token", "a Slack token", _B + r"xox[abposr]-[A-Za-z0-9-]{10,}", _always, ("xox",)
    ),
    Detector(
        "slack_webhook",
        "a Slack webhook URL",
        r"hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+",
        _always,
        ("hooks.slack.com",),
    ),
    Detector(
        "stripe_key",
        "a Stripe secret key",
        _B + r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
        _always,
        ("k_live_", "k_test_"),
    ),
    Detector("google_key", "a Google API key", _B + r"AIza[0-9A-Za-z_-]{35}", _always, ("AIza",)),
    Detector(
        "google_secret",
        "a Google OAuth client secret",
        _B + r"GOCSPX-[A-Za-z0-9_-]{28}",
        _always,
        ("GOCSPX-",),
    ),
    Detector(
        "jwt",
        "a JSON Web Token",
        _B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        _always,
        ("eyJ",),
    ),
    Detector(
        "sendgrid_key",
        "a SendGrid API key",
        _B + r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}",
        _always,
        ("SG.",),
    ),
    Detector("twilio_key", "a Twilio API key", _B + r"SK[0-9a-f]{32}" + _E, _always, ("SK",)),
    Detector("npm_token", "an npm token", _B + r"npm_[A-Za-z0-9]{36}" + _E, _always, ("npm_",)),
    Detector("pypi_token", "a PyPI token", _B + r"pypi-AgE[A-Za-z0-9_-]{50,}", _always, ("pypi-",)),
    Detector(
        "huggingface_token", "a Hugging Face token", _B + r"hf_[A-Za-z0-9]{30,}", _always, ("hf_",)
    ),
    Detector(
        "digitalocean_token",
        "a DigitalOcean token",
        _B + r"do[opr]_v1_[a-f0-9]{64}",
        _always,
        ("_v1_",),
    ),
    Detector(
        "shopify_token",
        "a Shopify token",
        _B + r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
        _always,
        ("shpat_", "shpss_", "shpca_", "shppa_"),
    ),
    Detector(
        "telegram_token",
        "a Telegram bot token",
        _B + r"\d{8,10}:AA[A-Za-z0-9_-]{33}",
        _always,
        (":AA",),
    ),
    Detector(
        "bearer_token",
        "a bearer token",
        r"(?i:bearer)\s+[A-Za-z0-9._~+/-]{20,}=*",
        _key_value,
        ("~bearer",),
    ),
    Detector(
        "url_password",
        "a password inside a URL",
        r"[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@]{1,64}:[^\s:/@]{3,}@",
        _always,
        ("://",),
    ),
    Detector(
        "api_key",
        "an API key or token",
        _K + r"(?i:(?:api[_ -]?key|apikey|secret[_ -]?key|access[_ -]?token|auth[_ -]?token|"
        r"client[_ -]?secret|token|secret)s?" + _IS + ")",
        _key_value,
        ("~key", "~token", "~secret"),
    ),
    Detector("card_number", "a payment card number", _CARD, _card, ("#",), numbered_thing),
)
