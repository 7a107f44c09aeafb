"""``feral sync invite`` and ``feral sync join``: pairing two devices in one step."""

from __future__ import annotations

import datetime
import logging
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import click

from feral.cli.context import pass_home, with_node
from feral.cli.output import count, echo_json, json_option
from feral.node.embedding import serve_running
from feral.node.home.identity import load_or_create_identity
from feral.node.links.invite import MadeInvitation, claim_for, make_invitation, pair_inviter
from feral.node.serve.serve_address import is_loopback_url, running_serve_url
from feral.node.settings.config import PeerSettings
from feral.sync.errors import InvalidInput
from feral.sync.invitation import Invitation, format_secret, parse_expiry, parse_invitation
from feral.sync.text import printable
from feral.sync.units import format_ms

if TYPE_CHECKING:
    from feral.node.links.peer import LinkResult
    from feral.node.node import Node

__all__ = ["invite", "join"]

MAX_LABEL = 64


def _invite_url(home: Path, url: str | None) -> str:
    """``--url``, or the running server's; checked to be a ``ws://``/``wss://`` URL with a host."""
    chosen = url or running_serve_url(home)
    if chosen is None:
        raise InvalidInput(
            "no feral serve is running on this home and no --url was given: start feral serve "
            "(with --host so other devices reach it), or give --url ws://HOST:PORT"
        )
    parts = urlsplit(chosen)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise InvalidInput(f"--url must be ws://HOST:PORT or wss://HOST:PORT, got {chosen!r}")
    return chosen


@click.command()
@click.option(
    "--expires",
    default="15m",
    show_default=True,
    help="How long the invitation stays open: 30s, 15m, 2h, 1d (at most 7d).",
)
@click.option(
    "--name",
    "label",
    default="",
    metavar="NAME",
    help="What to call the invited device in this node's log when it joins.",
)
@click.option(
    "--url",
    default=None,
    metavar="URL",
    help="The URL the other device dials (default: the running feral serve's).",
)
@json_option("the invitation")
@pass_home
def invite(home: Path, expires: str, label: str, url: str | None, as_json: bool) -> None:
    """Print a one-time invitation for another device to join with `feral sync join`."""
    lifetime = parse_expiry(expires)
    if len(label) > MAX_LABEL or printable(label) != label:
        raise InvalidInput(f"--name must be at most {MAX_LABEL} printable characters")
    target = _invite_url(home, url)
    made = with_node(home, lambda node: make_invitation(node, target, label, lifetime))
    if as_json:
        echo_json(_as_dict(made))
    else:
        _echo(made, lifetime)
    if not serve_running(home):
        click.echo("note: no feral serve runs on this home yet; start it before the other "
                   "device joins", err=True)  # fmt: skip
    if is_loopback_url(target):
        click.echo(f"note: {target} is reachable from this machine only; for another device, "
                   "serve with --host and invite with that address", err=True)  # fmt: skip


def _as_dict(made: MadeInvitation) -> dict[str, object]:
    invitation = made.invitation
    return {
        "url": invitation.url, "node_id": invitation.inviter,
        "secret": format_secret(invitation.secret), "link": invitation.link(),
        "expires_at": made.expires_ms, "name": made.label,
    }  # fmt: skip


def _echo(made: MadeInvitation, lifetime: int) -> None:
    invitation = made.invitation
    until = datetime.datetime.fromtimestamp(made.expires_ms / 1000, datetime.UTC)
    click.echo(f"Invitation for one device, open for {format_ms(lifetime)} "
               f"(until {until:%Y-%m-%dT%H:%M:%SZ}), usable once:")  # fmt: skip
    click.echo(f"  url      {invitation.url}")
    click.echo(f"  node id  {invitation.inviter}")
    click.echo(f"  secret   {format_secret(invitation.secret)}")
    click.echo("On the other device run:")
    click.echo(f"  feral sync join '{invitation.link()}'")


async def _join(node: Node, invitation: Invitation) -> LinkResult:
    from feral.node.links.dial import dial  # the websocket client: a join only, not an invite

    inviter = PeerSettings(invitation.inviter, invitation.url)
    result = await dial(node, inviter, until_quiet=True, join=claim_for(invitation))
    if result.authenticated:
        pair_inviter(node, invitation)
    return result


@click.command()
@click.argument("link", metavar="INVITE")
@json_option("the outcome")
@pass_home
def join(home: Path, link: str, as_json: bool) -> None:
    """Join the device that printed INVITE (a feral://join link): pair both, then sync once."""
    invitation = parse_invitation(link)
    if invitation.inviter == load_or_create_identity(home).node_id:
        raise InvalidInput("this invitation was made by this device; join it from another one")
    feral_log = logging.getLogger("feral")  # the outcome is reported below, once
    if not feral_log.handlers:
        feral_log.addHandler(logging.NullHandler())
    result = with_node(home, lambda node: _join(node, invitation))
    error = printable(result.error) if result.error else None
    if result.error_code == "not_paired" and not result.authenticated:
        error = (
            f"{invitation.inviter} has no invitation open (none made there in the last day); "
            "ask that device for a new one (feral sync invite)"
        )
    if not result.authenticated:
        raise click.ClickException(f"joining {invitation.url} failed: {error or 'no answer'}")
    if as_json:
        echo_json({"peer": invitation.inviter, "url": invitation.url, "paired": True,
                   "received": result.received, "sent": result.sent, "error": error})  # fmt: skip
    else:
        click.echo(f"Paired with {invitation.inviter} at {invitation.url}; received "
                   f"{count(result.received)} row(s), sent {count(result.sent)}")  # fmt: skip
    if error is not None or not result.quiet:
        raise click.ClickException(f"paired, but the first sync failed: {error or 'cut short'}")
