"""How ``feral memory search`` prints its results: the same lines whether the search ran in
this process or in the running ``feral serve`` (cli/serve_handoff.py), from the one shape
both give, the ``--json`` answer."""

from __future__ import annotations

from typing import Any

import click

from feral.cli.output import echo_json, echo_table, shorten

__all__ = ["echo_search"]


def echo_search(result: dict[str, Any], as_json: bool) -> None:
    """The results as JSON, or as a table, a count line, and each note on stderr."""
    if as_json:
        echo_json(result)
        return
    rows = [
        (f"{h['score']:.3f}", h["tier"], h["id"], shorten(h["content"], 60))
        for h in result["results"]
    ]
    echo_table(rows, ("score", "tier", "id", "content"))
    how = result["strategy"] + (", mmr" if result["mmr"] else "")
    click.echo(f"{result['total']} result(s) in {result['query_time_ms']:.1f} ms ({how})")
    for note in result["notes"]:
        click.echo(f"note: {note}", err=True)
