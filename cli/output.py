"""Rendering for the CLI: JSON for machines, aligned tables for people, and the ``--json`` flag.

Every listing command takes ``--json`` (DESIGN §6); :func:`json_option` is that flag, so its name,
parameter and help read the same everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import click

from feral.sync import units
from feral.sync.units import format_ms

from .table_fit import cut, fit_widths

__all__ = [
    "ago",
    "count",
    "duration",
    "echo_json",
    "echo_table",
    "json_option",
    "queue_line",
    "short_id",
    "shorten",
    "stamp",
]


F = TypeVar("F", bound=Callable[..., object])
"""A command function, handed back as it came with an option added (click keeps the option
beside it)."""


def json_option(what: str) -> Callable[[F], F]:
    """The ``--json`` flag, passed to the command as ``as_json``: "Print ``what`` as JSON."."""
    return click.option("--json", "as_json", is_flag=True, help=f"Print {what} as JSON.")


def echo_json(value: object) -> None:
    """Print ``value`` as JSON (sorted keys, UTF-8 kept readable, ``entities`` as arrays)."""
    import json  # not for ``feral --help``, which prints none

    from feral.node.api.json_shapes import readable

    click.echo(json.dumps(readable(value), indent=2, sort_keys=True, ensure_ascii=False))


def shorten(text: object, width: int) -> str:
    """One line of at most ``width`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def echo_table(rows: Sequence[Sequence[object]], headers: Sequence[str]) -> None:
    """Print rows under headers with columns padded to their widest cell, cut to fit 80
    columns (cli/table_fit.py)."""
    cells = [[" ".join(str(c).split()) for c in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    widths = fit_widths(widths, cells[0])
    for index, row in enumerate(cells):
        line = "  ".join(cut(cell, w).ljust(w) for cell, w in zip(row, widths, strict=True))
        click.echo(line.rstrip())
        if index == 0:
            click.echo("  ".join("-" * w for w in widths))


def stamp(hlc: int) -> str:
    """An HLC stamp as people read it: its wall clock in UTC and its counter,
    ``2026-12-01 17:20:01.250Z #3`` (the integer itself is what ``--json`` keeps)."""
    import datetime

    from feral.sync.hlc import COUNTER_BITS  # not for remember and search, which print none

    wall_ms, counter = hlc >> COUNTER_BITS, hlc & ((1 << COUNTER_BITS) - 1)
    moment = datetime.datetime.fromtimestamp(wall_ms / 1000, datetime.UTC)
    return f"{moment:%Y-%m-%d %H:%M:%S}.{wall_ms % 1000:03d}Z #{counter}"


def queue_line(pending: int) -> str:
    """The embedding queue as ``memory stats`` and ``sync status`` print it."""
    if not pending:
        return "empty: every row is searchable by meaning"
    return f"{pending} row(s) waiting to be embedded (found by full text meanwhile)"


def short_id(node_id: str | None) -> str:
    """The first characters of a node id, as tables show it (``--json`` keeps it whole)."""
    return units.short_id(node_id or "") or "unknown"


def count(n: int) -> str:
    """A count with thousands separators: ``12,500``."""
    return f"{n:,}"


def duration(ms: int) -> str:
    """A duration in the units people read (``850 ms``, ``42 s``, ``3 min 5 s``, ``2 d 4 h``),
    as clock messages give it (feral.sync.units); never negative."""
    return format_ms(max(0, ms))


def ago(ms: int | None, now_ms: int) -> str:
    """How long before ``now_ms`` the moment ``ms`` was: ``3 min ago`` (``never`` for None)."""
    if ms is None:
        return "never"
    if now_ms - ms < 1000:
        return "just now"
    return f"{duration(now_ms - ms)} ago"
