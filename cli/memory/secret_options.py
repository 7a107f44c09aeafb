"""``--secrets refuse|skip`` for the commands that write many lines (import, ingest).

The scan itself is node/secrets/scan.py; these commands screen every line before anything is
written, so ``refuse`` (the default) writes nothing and names the line, and ``skip`` writes
the other lines and says which were left out, by number only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from feral.node.secrets.scan import POLICIES, skipped_summary

__all__ = ["screened", "secrets_option"]

T = TypeVar("T")


def secrets_option(what: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """``--secrets refuse|skip``: what to do with lines holding what looks like a secret."""
    return click.option(
        "--secrets",
        "secrets",
        type=click.Choice(POLICIES),
        default="refuse",
        show_default=True,
        help=f"A line holding what looks like a secret: refuse (write nothing) or skip it "
        f"({what} the other lines; the skipped line numbers go to stderr).",
    )


def screened(kept: list[T], skipped: list[int]) -> list[T]:
    """``kept``, after one line on stderr naming the ``skipped`` line numbers (if any)."""
    if skipped:
        click.echo(skipped_summary(skipped), err=True)
    return kept
