"""``python -m benchmarks secrets [--json] [--rounds R]``: how well the secret scan tells
secrets from look-alikes, and what it costs a write.

The labelled set is ``benchmarks/secrets/labelled.jsonl``: one object a line, ``text``,
``secret`` (true or false), ``lang``, ``kind`` and ``half``. The secrets are credentials as
people write them in notes (passwords with the account they open, wifi keys, door and alarm
codes, PINs and passcodes, seed phrases) in English, German, French, Spanish and a few in
Italian, Portuguese and Dutch; the innocents are what looks like them and is not (IMEIs,
order and tracking numbers, postal PIN codes, public keys, sentences *about* a password,
promo codes). Each kind is split in turn between a ``tune`` half, which the rules in
node/secrets/patterns.py were adjusted against, and a ``held`` half, which they were not:
the held-out figures are the honest ones.

The cost is :func:`find_secret` per text, the median of ``rounds`` passes over the set and
over ordinary memories (the benchmark corpus), in microseconds: each write of user text
runs it once (an import twice).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from feral.node.secrets.scan import find_secret, triple_text

from .corpus import make_episodes, make_triples

__all__ = ["SET_PATH", "Half", "load_set", "main", "measure_set", "render_set", "scan_cost_us"]

SET_PATH = Path(__file__).resolve().parent / "secrets" / "labelled.jsonl"
HALVES = ("tune", "held")


@dataclass(frozen=True)
class Half:
    """One half's figures, and the texts it got wrong (shown so a reader can judge them)."""

    half: str
    secrets: int
    innocents: int
    recall: float
    false_positive_rate: float
    missed: list[str]
    refused: list[str]
    recall_by_lang: dict[str, float]


def load_set(path: Path = SET_PATH) -> list[dict[str, Any]]:
    """The labelled rows, in file order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _half(name: str, rows: list[dict[str, Any]]) -> Half:
    secrets = [r for r in rows if r["secret"]]
    innocents = [r for r in rows if not r["secret"]]
    missed = [r["text"] for r in secrets if find_secret(r["text"]) is None]
    refused = [r["text"] for r in innocents if find_secret(r["text"]) is not None]
    by_lang: dict[str, float] = {}
    for lang in sorted({r["lang"] for r in secrets}):
        of_lang = [r for r in secrets if r["lang"] == lang]
        caught = sum(r["text"] not in missed for r in of_lang)
        by_lang[lang] = round(caught / len(of_lang), 3)
    return Half(
        half=name,
        secrets=len(secrets),
        innocents=len(innocents),
        recall=round(1 - len(missed) / len(secrets), 3),
        false_positive_rate=round(len(refused) / len(innocents), 3),
        missed=missed,
        refused=refused,
        recall_by_lang=by_lang,
    )


def scan_cost_us(texts: list[str], rounds: int) -> float:
    """The median over ``rounds`` passes of the scan's time per text, in microseconds."""
    passes = []
    for _ in range(rounds):
        started = time.perf_counter()
        for text in texts:
            find_secret(text)
        passes.append((time.perf_counter() - started) / len(texts) * 1e6)
    return round(statistics.median(passes), 2)


def measure_set(rounds: int = 5, path: Path = SET_PATH) -> dict[str, Any]:
    """Both halves' figures, and the scan's cost per text on the set and on ordinary memories."""
    rows = load_set(path)
    ordinary = [text for text, _ in make_episodes(1000)]
    ordinary += [triple_text(t) for t in make_triples(1000)]
    return {
        "halves": [asdict(_half(h, [r for r in rows if r["half"] == h])) for h in HALVES],
        "scan_us_per_text_labelled": scan_cost_us([r["text"] for r in rows], rounds),
        "scan_us_per_text_ordinary": scan_cost_us(ordinary, rounds),
        "rounds": rounds,
    }


def render_set(result: dict[str, Any]) -> str:
    """A table of both halves, the cost, then each text a half got wrong."""
    lines = ["half  secrets  innocents  recall  false positives  recall by language"]
    for half in result["halves"]:
        langs = " ".join(f"{k} {v:.2f}" for k, v in half["recall_by_lang"].items())
        lines.append(
            f"{half['half']:5} {half['secrets']:7} {half['innocents']:10} "
            f"{half['recall']:7.3f} {half['false_positive_rate']:16.3f}  {langs}"
        )
    lines.append(
        f"scan per text (median of {result['rounds']}): "
        f"{result['scan_us_per_text_labelled']} us on the set, "
        f"{result['scan_us_per_text_ordinary']} us on ordinary memories"
    )
    for half in result["halves"]:
        lines += [f"{half['half']}: missed  {text}" for text in half["missed"]]
        lines += [f"{half['half']}: refused {text}" for text in half["refused"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks secrets")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--rounds", type=int, default=5, help="timed passes over the texts")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    result = measure_set(args.rounds)
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else render_set(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
