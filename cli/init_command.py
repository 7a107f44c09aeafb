"""``feral init``: the one command that creates a home; it says what it made or changed.

Run again on an existing home it keeps the identity and, given ``--name``, renames the device,
saying so (``Renamed this device: "a" -> "b"``) on stderr; stdout keeps the node id alone, so
``id=$(feral init)`` works either way. A home whose database is there but whose key is gone is
refused: a new key would be another node wearing this one's data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .home import check_home, pass_new_home
from .output import echo_json, json_option

__all__ = ["init"]


@click.command()
@click.option(
    "--name", help="A name for this device, shown to its peers (renames it if given again)."
)
@json_option("the node id, home, name and what changed")
@pass_new_home
def init(home: Path, name: str | None, as_json: bool) -> None:
    """Create the home, key pair and settings; print the node id.

    On a home that exists already, nothing is made again: the node id is printed, and --name
    renames the device (saying from what to what).
    """
    outcome = _initialise(home, name)
    if as_json:
        echo_json(outcome)
        return
    click.echo(outcome["node_id"])
    if outcome["created"]:
        click.echo(f"Created a feral home at {home}", err=True)
    elif outcome["renamed_from"] is not None:
        click.echo(f'Renamed this device: "{outcome["renamed_from"]}" -> "{name}"', err=True)


def _initialise(home: Path, name: str | None) -> dict[str, Any]:
    """Make (or keep) the home's key and settings; what it holds and what changed."""
    import dataclasses

    from feral.node.home.home_paths import DATABASE_FILE
    from feral.node.home.identity import KEY_FILENAME, load_or_create_identity
    from feral.node.settings.config import load_settings, save_settings

    created = not (home / KEY_FILENAME).is_file()
    if created and (home / DATABASE_FILE).exists():
        check_home(home)  # the key alone is gone: refused, never replaced
    identity = load_or_create_identity(home)
    settings = load_settings(home)
    renamed_from = None
    if name is not None and name != settings.name and not created:
        renamed_from = settings.name
    if name is not None or not (home / "settings.json").exists():
        if name is not None:
            settings = dataclasses.replace(settings, name=name)
        save_settings(home, settings)
    return {
        "node_id": identity.node_id,
        "home": str(home),
        "name": settings.name,
        "created": created,
        "renamed_from": renamed_from,
    }
