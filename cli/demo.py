"""``feral demo``: a guided run on a throw-away home, so a newcomer sees feral work in seconds."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from node.node import Node

from .main import run
from .output import echo_table, shorten

__all__ = ["demo"]

FACTS = (
    ("user", "doctor_name", "Dr. Chen"),
    ("Alice", "birthday", "May 4"),
    ("user", "favourite_editor", "Helix"),
    ("user", "note", "the dentist appointment moved to Thursday at 3pm"),
)
EPISODES = (
    (
        "planning",
        "Planned the trip to Lisbon with Alice: flights booked for June",
        ["Alice", "Lisbon"],
    ),
    ("health", "Talked about Dr. Chen and the yearly check-up in March", ["Dr. Chen"]),
)
QUERIES = ("doctor", "Alice birthday", "dentist Thursday")


async def _tour(home: Path) -> None:
    node = await Node.open(home)
    try:
        click.secho(f"One node, id {node.node_id}, home {home}", bold=True)
        for triple in FACTS:
            row = await node.remember(triple)
            click.echo(f"  remembered {row['id']}  {' / '.join(triple)}")
        for session, summary, entities in EPISODES:
            row = await node.add_episode(session, summary, entities)
            click.echo(f"  episode    {row['id']}  {summary}")
        again = await node.remember(FACTS[0])
        click.echo(f"  remembering the first fact again gives the same row: {again['id']}")
        for query in QUERIES:
            result = await node.search(query, top_k=3)
            click.secho(f"\nsearch {query!r} ({result.strategy})", bold=True)
            rows = [
                (f"{h['score']:.3f}", h["tier"], shorten(h["content"], 60)) for h in result.results
            ]
            echo_table(rows, ("score", "tier", "content"))
        stats = await node.stats()
        click.secho("\nstats", bold=True)
        echo_table(
            [(t, c["live"], c["archived"], c["deleted"]) for t, c in stats["tiers"].items()],
            ("tier", "live", "archived", "deleted"),
        )
        click.echo(
            f"delta log: {stats['delta_log_entries']} entries; vector search: "
            f"{stats['vector_search']}"
        )
    finally:
        await node.close()


@click.command()
def demo() -> None:
    """Run a short tour on a temporary home: remember, search, stats."""
    with tempfile.TemporaryDirectory(prefix="feral-demo-") as tmp:
        run(_tour(Path(tmp) / "laptop"))
