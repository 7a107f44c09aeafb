"""The cost of encrypted links: the same catch-up over ``wss://`` and over plain ``ws://``.

Both run in one process one after the other, twice each in alternation (plain, TLS, plain,
TLS), and the faster of each pair is kept, so a burst of load on a shared machine does not
decide the ratio alone. Bytes are counted by the catch-up's relay below TLS, so the TLS figure
is what an eavesdropper would see: records, handshake and certificate included.
"""

from __future__ import annotations

from typing import Any

from .catchup_bench import run_catchup

__all__ = ["run_tls_catchup"]

REPEATS = 2


def run_tls_catchup(rows: int, repeats: int = REPEATS) -> dict[str, Any]:
    """Rates, their ratio, and TLS wire bytes per row against the raw values' bytes."""
    plain: list[dict[str, Any]] = []
    tls: list[dict[str, Any]] = []
    for _ in range(repeats):
        plain.append(run_catchup(rows))
        tls.append(run_catchup(rows, tls=True))
    best_plain = max(plain, key=lambda f: f["catchup_rows_per_s"])
    best_tls = max(tls, key=lambda f: f["catchup_rows_per_s"])
    raw = best_tls["raw_value_bytes_per_row"]
    return {
        "tls_vs_plain_catchup": best_tls["catchup_rows_per_s"] / best_plain["catchup_rows_per_s"],
        "tls_wire_bytes_ratio": best_tls["wire_bytes_per_row"] / raw,
        "tls_catchup_rows_per_s": best_tls["catchup_rows_per_s"],
        "tls_plain_catchup_rows_per_s": best_plain["catchup_rows_per_s"],
        "tls_wire_bytes_per_row": best_tls["wire_bytes_per_row"],
        "tls_plain_wire_bytes_per_row": best_plain["wire_bytes_per_row"],
    }
