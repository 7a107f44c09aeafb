"""Rendering for the CLI: JSON for machines, aligned tables for people."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click

__all__ = ["echo_json", "echo_table", "shorten"]


def echo_json(value: Any) -> None:
    """Print ``value`` as JSON (sorted keys, UTF-8 kept readable)."""
    click.echo(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False))


def shorten(text: object, width: int) -> str:
    """One line of at most ``width`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def echo_table(rows: Sequence[Sequence[object]], headers: Sequence[str]) -> None:
    """Print rows under headers with columns padded to their widest cell."""
    cells = [[str(c) for c in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for index, row in enumerate(cells):
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if index == 0:
            click.echo("  ".join("-" * w for w in widths))
