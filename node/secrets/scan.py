"""Secrets kept out: the scan every write of user text passes before anything is stored.

A memory replicates to every paired device and stays in every export, so a pasted API key or
password written once is copied everywhere. The scan refuses it before the write: nothing is
stored, so nothing is replicated. :func:`find_secret` is pure and fast: the patterns are compiled
once, and each runs only when one of its trigger literals (``sk-``, ``AKIA``, ``password``, ...)
is in the text, which most text never holds (benchmarks/secret_bench.py measures it on an
import). :func:`refuse_secrets` raises :class:`SecretRefused`, whose message names the kind and
never repeats the value. The callers: ``Node.remember``, ``Node.absorb``, ``add_episode``,
``log_execution``, ``import_facts``, ``ingest``, ``add_entity`` and ``relate``, a link's note
and a boost's reason (so the CLI, the API and the MCP tools), and the absorb pipeline's scan
step; ``feral memory import``/``ingest`` screen every line first
(:func:`screen_lines`) to name the line and to honour ``--secrets refuse|skip``.

What is found:

- provider keys and tokens by their published shapes: OpenAI, Anthropic, AWS (access key ids,
  and 40-character secret keys written next to their name), GitHub, GitLab, Slack (tokens and
  webhooks), Stripe, Google, SendGrid, Twilio, npm, PyPI, Hugging Face, DigitalOcean, Shopify,
  Telegram bots, JSON Web Tokens and ``Bearer`` tokens;
- private key blocks (``-----BEGIN ... PRIVATE KEY-----``: PEM, OpenSSH, PGP);
- a password written into a URL (``scheme://user:password@host``);
- credentials as people write them, in English, German, French, Spanish and the common
  Italian, Portuguese and Dutch words (node/secrets/phrases.py): passwords and wifi keys (``my
  password for bob@gmail.com is ...``, ``Das WLAN-Passwort ist ...``, ``pw: ...``), door,
  alarm and lock codes, PINs and passcodes (``le code de la porte est 2580B``, ``mi PIN es
  5678``; a zip, area or promo code is not one), seed phrases; and ``api_key = ...``,
  ``token: ...`` with a value of at least 12 characters mixing letters and digits;
- payment card numbers: 13 to 19 digits (spaces or dashes between), a card network's prefix,
  and a valid Luhn check digit;
- high-entropy strings: a run of at least 20 characters of ``[A-Za-z0-9+/=_-]`` holding lower
  case, upper case and digits, with a Shannon entropy of at least :data:`ENTROPY_BITS` bits per
  character.

Allowed on purpose (ordinary in notes; tests/node/test_secret_scan.py and the labelled set
benchmarks/secrets/labelled.jsonl hold them): public keys and wallet addresses, IMEIs and
card-shaped numbers after ``order``, ``IMEI``, ``id``..., postal PIN codes beside an address, UUIDs,
hexadecimal hashes (git commit ids, SHA-256 sums: one case only), ULIDs and feral's own ids
(upper case and digits only), version strings, and URLs, whose paths and queries are not
entropy-checked (document ids in links are long and random by design); a URL still refuses a
password before its ``@`` and a provider key anywhere in it. A hexadecimal secret with no
name beside it (a bare 32-digit token) is therefore not recognised: ``token: <hex>`` is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar

from feral.sync.errors import InvalidInput

from .patterns import DETECTORS, MIN_RANDOM_TOKEN, random_looking
from .phrases import PHRASE_DETECTORS

__all__ = [
    "POLICIES",
    "Policy",
    "SecretFound",
    "SecretRefused",
    "find_secret",
    "refusal",
    "refuse_secrets",
    "refuse_triple",
    "refuse_triples",
    "screened_messages",
    "screen_lines",
    "skipped_summary",
    "triple_text",
]

T = TypeVar("T")


class _Said(Protocol):
    @property
    def content(self) -> str: ...


M = TypeVar("M", bound=_Said)
Policy = Literal["refuse", "skip"]
POLICIES: tuple[Policy, ...] = ("refuse", "skip")

RETRY = "remove it and try again"


@dataclass(frozen=True)
class SecretFound:
    """What the scan found: a stable ``code``, the ``kind`` people read, and where it is.

    ``start``/``end`` are offsets into the scanned text, for callers that point at it; the
    value itself is never put in a message.
    """

    code: str
    kind: str
    start: int
    end: int


class SecretRefused(InvalidInput):
    """Text refused because it holds what looks like a secret (HTTP 422, exit status 1)."""

    code = "secret_refused"

    def __init__(self, found: SecretFound, where: str = "", advice: str = RETRY) -> None:
        super().__init__(refusal(found, where, advice))
        self.found = found
        self.where = where


def refusal(found: SecretFound, where: str = "", advice: str = RETRY) -> str:
    """The one line that says what was refused; ``where`` (``line 12``) goes in front."""
    prefix = f"{where}: " if where else ""
    return (
        f"{prefix}refused: the text contains what looks like {found.kind} (never stored); {advice}"
    )


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,20}://\S+")
_PUBLIC = re.compile(
    r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com)\s+\S+"
    r"|(?i:public[ _-]?key|pubkey|öffentliche[rn]?(?: [\w-]+)? schlüssel|clé publique|"
    r"clave pública|(?:bitcoin|btc|wallet|ethereum|eth|crypto) address)[\s:=\"']{1,6}\S+"
    r"|-----BEGIN [A-Z ]*PUBLIC KEY[A-Z ]*-----.*?-----END [A-Z ]*PUBLIC KEY[A-Z ]*-----",
    re.DOTALL,
)
"""A public key or address: random by design, and meant to be shared (a private key is not)."""
_RANDOM = re.compile(r"[A-Za-z0-9+/=_-]{20,}")
"""Runs of key characters; each match is a whole run (a shorter run cannot hold 20)."""
_ALL = (*DETECTORS, *PHRASE_DETECTORS)
_COMPILED = tuple((detector, re.compile(detector.pattern)) for detector in _ALL)
_DIGITS = "0123456789"
CARD_DIGITS = 13
"""Text with fewer digits holds no card number: the card detector's trigger ("#")."""


def _literals(any_case: bool) -> tuple[str, ...]:
    """The detectors' trigger literals found in the text as it is, or (``any_case``) lowered."""
    return tuple(
        sorted(
            {
                t[1:] if any_case else t
                for d in _ALL
                for t in d.triggers
                if t != "#" and (t[0] == "~") == any_case
            }
        )
    )


_CASED, _ANY_CASE = _literals(False), _literals(True)


def _triggers_in(text: str) -> set[str]:
    """The trigger literals in ``text`` (``~`` marking those found in any case, ``#`` many
    digits). Plain substring tests: far quicker than one alternation, which Python's regular
    expressions try at every position."""
    found = {t for t in _CASED if t in text}
    lower = text.lower()
    found.update("~" + t for t in _ANY_CASE if t in lower)
    if sum(map(text.count, _DIGITS)) >= CARD_DIGITS:
        found.add("#")
    return found


def _fired_by(triggers: tuple[str, ...]) -> frozenset[str]:
    """Every literal :func:`_triggers_in` can report that holds one of ``triggers`` (found
    ``sk-ant-`` holds ``sk-``), worked out once so the scan asks one set question a detector."""
    literals = {*_CASED, *("~" + t for t in _ANY_CASE), "#"}
    return frozenset(
        hit for hit in literals for t in triggers if (t[0] == "~") == (hit[0] == "~") and t in hit
    )


_FIRED_BY = tuple(_fired_by(detector.triggers) for detector in _ALL)


def find_secret(text: str) -> SecretFound | None:
    """The first secret in ``text`` in the detectors' order, or ``None``; then random tokens.

    A detector runs only when one of its triggers is in the text, and most text holds none.
    A match its check turns down (a Luhn failure, ``the password is in the drawer``) is skipped
    by one character, not by its length, so nothing it spanned goes unread.
    """
    found = _triggers_in(text)
    for (detector, pattern), fired_by in zip(_COMPILED, _FIRED_BY, strict=True) if found else ():
        if fired_by.isdisjoint(found):
            continue
        match = pattern.search(text)
        while match is not None:
            if detector.check(match.group(0)) and not detector.excused(text, *match.span()):
                return SecretFound(detector.code, detector.kind, match.start(), match.end())
            match = pattern.search(text, match.start() + 1)
    return _random_token(text)


def _random_token(text: str) -> SecretFound | None:
    """A long random-looking token outside every URL and every public key."""
    if max(map(len, text.split()), default=0) < MIN_RANDOM_TOKEN:
        return None  # no run of 20 key characters can fit
    urls = [m.span() for m in _URL.finditer(text)] if "://" in text else []
    urls += [m.span() for m in _PUBLIC.finditer(text)]
    for match in _RANDOM.finditer(text):
        start, end = match.span()
        if any(a <= start < b for a, b in urls):
            continue
        if random_looking(match.group(0)):
            return SecretFound("random_token", "a random secret or token", start, end)
    return None


def refuse_secrets(texts: Iterable[str], where: str = "") -> None:
    """Raise :class:`SecretRefused` when any of ``texts`` holds a secret.

    The texts are scanned joined by a line break, so a phrasing split across the parts of a
    triple (``user`` / ``password`` / ``hunter22``) is still seen.

    Raises:
        SecretRefused: naming the kind (and ``where``, e.g. ``line 12``), never the value.
    """
    found = find_secret("\n".join(texts))
    if found is not None:
        raise SecretRefused(found, where)


def triple_text(triple: tuple[str, str, str]) -> str:
    """A triple as the scan reads it: ``subject``, then ``predicate is object`` on one line,
    so ``user / wifi_password / hunter22`` reads as the phrasing it stands for."""
    subject, predicate, obj = triple
    return f"{subject}\n{predicate} is {obj}"


def refuse_triple(triple: tuple[str, str, str], where: str = "", advice: str = RETRY) -> None:
    """:func:`refuse_secrets` for a triple (read as :func:`triple_text`)."""
    found = find_secret(triple_text(triple))
    if found is not None:
        raise SecretRefused(found, where, advice)


def refuse_triples(triples: Iterable[tuple[str, str, str]], first: int = 1) -> None:
    """:func:`refuse_triple` for each, naming the one refused by its place (``item 7``)."""
    for index, triple in enumerate(triples, first):
        refuse_triple(triple, f"item {index}")


def screened_messages(messages: Iterable[M]) -> Iterator[M]:
    """``messages`` as they come, each refused if its content holds a secret (``message 3``)."""
    for index, message in enumerate(messages, 1):
        refuse_secrets([message.content], f"message {index}")
        yield message


def screen_lines(
    lines: Iterable[tuple[int, T]], text_of: Callable[[T], str], policy: Policy
) -> tuple[list[T], list[int]]:
    """Numbered items without those holding a secret, and the line numbers left out.

    ``refuse`` raises at the first such line (``line 12: refused: ...``), so a caller that
    screens every line before writing writes nothing; ``skip`` keeps the others.

    Raises:
        SecretRefused: under ``refuse``, naming the line and the kind.
    """
    kept: list[T] = []
    skipped: list[int] = []
    for number, item in lines:
        found = find_secret(text_of(item))
        if found is None:
            kept.append(item)
        elif policy == "refuse":
            advice = "nothing was written; remove it, or pass --secrets skip to leave it out"
            raise SecretRefused(found, f"line {number}", advice)
        else:
            skipped.append(number)
    return kept, skipped


def skipped_summary(skipped: list[int], shown: int = 20) -> str:
    """``skipped 3 line(s) holding what looks like a secret: 4, 9, 12`` (never the values)."""
    numbers = ", ".join(str(n) for n in skipped[:shown])
    more = f" and {len(skipped) - shown} more" if len(skipped) > shown else ""
    return f"skipped {len(skipped)} line(s) holding what looks like a secret: {numbers}{more}"
