"""``feral sync node-id`` and ``feral sync clock-reset``, each with ``--json`` (issue 15, item 6).

Moved out of cli/sync/sync_commands.py when they gained ``--json``, so that module stays under its
size; the ``sync`` group names them for its lazy loading (cli/sync/sync_commands.py). node/ is
imported inside each command: ``feral sync -h`` imports this module to list them.
"""

from __future__ import annotations

from pathlib import Path

import click

from feral.cli.context import pass_home, with_node
from feral.cli.output import echo_json, json_option

__all__ = ["clock_reset", "node_id"]


@click.command(name="node-id")
@json_option("the node id and name")
@pass_home
def node_id(home: Path, as_json: bool) -> None:
    """Print this node's id (a peer pairs with it: feral sync peers add --node-id ID)."""
    from feral.node.home.identity import load_or_create_identity
    from feral.node.settings.config import load_settings

    identity = load_or_create_identity(home)
    if as_json:
        echo_json({"node_id": identity.node_id, "name": load_settings(home).name})
        return
    click.echo(identity.node_id)


@click.command(name="clock-reset")
@json_option("how many writes were re-stamped")
@pass_home
def clock_reset(home: Path, as_json: bool) -> None:
    """Bring this node's writes stamped ahead of its clock (a clock that ran ahead, now right)
    back to the clock, keeping their order; refused if a peer already holds them."""
    from feral.node.clock_state import reset_clock
    from feral.sync.hlc import COUNTER_BITS
    from feral.sync.units import format_ms

    done = with_node(home, reset_clock)
    ahead_ms = max(0, (done.newest_before - done.newest_after) >> COUNTER_BITS)
    if as_json:
        echo_json({"restamped": done.entries, "ahead_ms": ahead_ms if done.entries else 0})
        return
    if not done.entries:
        click.echo("no write of this node is stamped ahead of its clock; its clock mark, if "
                   "it was ahead, is back at the clock")  # fmt: skip
        return
    click.echo(
        f"re-stamped {done.entries} write(s) of this node that were up to "
        f"{format_ms(ahead_ms)} ahead of its clock, in their order; peers receive them at the "
        "next sync"
    )
