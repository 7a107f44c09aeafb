"""``feral sync cert``: this node's TLS certificate, for ``curl --cacert`` and pinning."""

from __future__ import annotations

from pathlib import Path

import click

from feral.cli.context import pass_home
from feral.cli.output import echo_json, json_option
from feral.node.home.identity import load_or_create_identity
from feral.node.links.tls import certificate_pem, ensure_certificate, identity_fingerprint

__all__ = ["cert"]


@click.command()
@click.option("--pem", "as_pem", is_flag=True, help="Print the certificate itself (PEM).")
@json_option("the node id, fingerprint, file and PEM")
@pass_home
def cert(home: Path, as_pem: bool, as_json: bool) -> None:
    """Print this node's TLS certificate: its SHA-256 fingerprint and file, or the PEM.

    The certificate is made from the node's own key, so its key's fingerprint is the node id:
    peers pin it by id, and `curl --cacert` takes the PEM.
    """
    identity = load_or_create_identity(home)
    path = ensure_certificate(home, identity)
    pem = certificate_pem(identity)
    if as_json:
        echo_json({"node_id": identity.node_id, "sha256": identity_fingerprint(identity),
                   "file": str(path), "pem": pem.decode("ascii")})  # fmt: skip
        return
    if as_pem:
        click.echo(pem.decode("ascii"), nl=False)
        return
    click.echo(f"node id  {identity.node_id}")
    click.echo(f"sha256   {identity_fingerprint(identity)}")
    click.echo(f"file     {path}")
