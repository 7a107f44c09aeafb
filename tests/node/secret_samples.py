"""Generated secrets of every kind the scan knows, and the ordinary text it must let through.

The keys are made here, at random, in each provider's published shape: none is a real key.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = [
    "ALLOWED",
    "GENERATORS",
    "card_number",
    "ordinary_texts",
    "random_token",
]

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER_ALNUM = string.ascii_uppercase + string.digits
ROOT = Path(__file__).resolve().parents[2]


def _pick(rng: random.Random, alphabet: str, size: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(size))


def random_token(rng: random.Random, size: int = 40, alphabet: str = ALNUM) -> str:
    """A random token of ``size`` characters (with a digit and both cases, as keys have)."""
    while True:
        token = _pick(rng, alphabet, size)
        if any(c.isdigit() for c in token) and token.lower() != token != token.upper():
            return token


def card_number(rng: random.Random, prefix: str = "4", size: int = 16) -> str:
    """A Luhn-valid card number with ``prefix``, grouped by four with spaces."""
    body = prefix + _pick(rng, string.digits, size - len(prefix) - 1)
    total = 0
    for index, char in enumerate(reversed(body)):
        value = int(char) * (1 if index % 2 else 2)
        total += value - 9 if value > 9 else value
    digits = body + str((10 - total % 10) % 10)
    return " ".join(digits[i : i + 4] for i in range(0, len(digits), 4))


def _private_key(rng: random.Random) -> str:
    kind = rng.choice(["RSA ", "EC ", "OPENSSH ", "ENCRYPTED ", ""])
    body = random_token(rng, 64, ALNUM + "+/")
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"


# (kind named in the refusal, generator of one secret as it would be pasted)
GENERATORS: tuple[tuple[str, Callable[[random.Random], str]], ...] = (
    ("OpenAI API key", lambda r: "sk-proj-" + random_token(r, 48) + "_" + random_token(r, 20)),
    ("OpenAI API key", lambda r: "sk-" + random_token(r, 48)),
    ("Anthropic API key", lambda r: "sk-ant-api03-" + random_token(r, 80, ALNUM + "_-")),
    ("AWS access key ID", lambda r: r.choice(["AKIA", "ASIA"]) + _pick(r, UPPER_ALNUM, 16)),
    (
        "AWS secret access key",
        lambda r: "aws_secret_access_key = " + random_token(r, 40, ALNUM + "/+"),
    ),
    ("GitHub token", lambda r: r.choice(["ghp_", "gho_", "ghs_"]) + random_token(r, 36)),
    ("GitHub token", lambda r: "github_pat_" + random_token(r, 22) + "_" + random_token(r, 59)),
    ("GitLab token", lambda r: "glpat-" + random_token(r, 20)),
    ("Slack token", lambda r: "xoxb-" + _pick(r, string.digits, 12) + "-" + random_token(r, 24)),
    ("Stripe secret key", lambda r: r.choice(["sk_live_", "rk_live_"]) + random_token(r, 24)),
    ("Google API key", lambda r: "AIza" + random_token(r, 35, ALNUM + "_-")),
    (
        "JSON Web Token",
        lambda r: "eyJhbGciOiJIUzI1NiJ9.eyJ" + random_token(r, 30) + "." + random_token(r, 43),
    ),
    ("Twilio API key", lambda r: "SK" + _pick(r, HEX, 32)),
    (
        "SendGrid API key",
        lambda r: "SG." + random_token(r, 22, ALNUM + "_-") + "." + random_token(r, 43),
    ),
    ("npm token", lambda r: "npm_" + random_token(r, 36)),
    ("Hugging Face token", lambda r: "hf_" + random_token(r, 34)),
    ("private key", _private_key),
    ("password", lambda r: "my bank password is " + random_token(r, 12, ALNUM + "!#%")),
    ("password", lambda r: "pw: " + random_token(r, 10)),
    ("password", lambda r: "the wifi password for the flat is " + random_token(r, 14)),
    ("passcode or PIN", lambda r: "the door passcode " + _pick(r, string.digits, 6)),
    ("passcode or PIN", lambda r: "the alarm code is " + _pick(r, string.digits, 6)),
    ("password", lambda r: "login: bob pass: " + random_token(r, 10)),
    ("password", lambda r: 'my password is "correct horse ' + random_token(r, 9) + '"'),
    ("payment card number", lambda r: card_number(r)),
    ("payment card number", lambda r: card_number(r, "5", 16).replace(" ", "-")),
    ("payment card number", lambda r: card_number(r, "37", 15).replace(" ", "")),
    ("password inside a URL", lambda r: f"postgres://app:{random_token(r, 16)}@db.example.org/x"),
    ("random secret or token", lambda r: random_token(r, 48, ALNUM + "+/")),
)

ALLOWED = (
    "the release is commit 3f786850e387550fdab836ed7e6dc881de23001b on main",
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "the ticket id is 550e8400-e29b-41d4-a716-446655440000",
    "fact 01HZX3M9K2Q4R5S6T7V8W9XAYB was merged into 01J0ABCDEFGHJKMNPQRSTVWXYZ",
    "read https://docs.google.com/document/d/1aBcD3fGhIjKlMnOpQrStUvWxYz0123456789/edit",
    "watch https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42s later",
    "the password is in the drawer under the printer",
    "my password was changed yesterday, the new one is in the manager",
    "reset the router password at least once a year",
    "call +44 20 7946 0958 or 0049 30 1234 5678 after 9",
    "the invoice total was 1234 5678 9012 euros over three years",  # not Luhn-valid, short
    "flight LH1234 leaves at 14:05 from gate B22, seat 17C",
    "the photos are in MyVacationPhotos2024Album on the NAS",
    "version 2.14.3-rc1+build.20240611 fixed the import",
    "the token bucket refills at 20 tokens per second",
    "pin the meeting notes to the team channel",
    "my API key is stored in the keychain",
    "the secret is to add a pinch of salt",
    "node id 7f3a9c2e41b05d86 and epoch 1717171717171",
    "my zip code is 90210 and the area code is 020",
    "the mountain pass is blocked by snow until April",
    "we got a season pass for the museum",
)


def ordinary_texts() -> Iterator[str]:
    """Text that must never be refused: the retrieval benchmark's memories and queries."""
    for name in ("memories", "queries"):
        path = ROOT / "benchmarks" / "retrieval" / f"{name}.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            yield str(item.get("text") or item.get("query"))
