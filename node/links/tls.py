"""TLS for links and the HTTP API: a certificate made from the node's own key, pinned by node id.

A node id is the fingerprint of the node's Ed25519 public key (node/home/identity.py). The node's
certificate is a self-signed X.509 certificate over that same key, so a dialler that knows the
peer's id needs no certificate authority and nothing else exchanged: after the TLS handshake it
takes the key out of the certificate the server presented and checks that its fingerprint is the
paired id, before a single byte of the WebSocket upgrade is sent. Certificate *validation* in the
ssl module is therefore off (``CERT_NONE``) on both sides; the pin replaces it on the dialler, and
the protocol's signed handshake (docs/PROTOCOL.md §4) authenticates the dialler to the server.

The certificate is made deterministically (fixed validity, serial from the key, Ed25519 signatures
are deterministic), so rebuilding it from the key gives the same bytes and the same fingerprint.
It lives in ``<home>/node.crt``, mode 0600 like the key, and is rewritten when missing or when it
no longer matches the key.
"""

from __future__ import annotations

import datetime
import hashlib
import ssl
from pathlib import Path
from urllib.parse import urlsplit

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from feral.node.home.files import write_private_file
from feral.node.home.identity import KEY_FILENAME, Identity
from feral.sync.ids import node_id_for
from feral.sync.types import NodeId

from .addresses import is_loopback_host

__all__ = [
    "CERT_FILENAME",
    "certificate_der",
    "certificate_fingerprint",
    "certificate_node_id",
    "certificate_pem",
    "client_context",
    "ensure_certificate",
    "identity_fingerprint",
    "is_loopback_host",
    "plaintext_refusal",
    "server_context",
]

CERT_FILENAME = "node.crt"
"""The certificate's file name inside the home, beside ``node.key``."""

_NOT_BEFORE = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
_NOT_AFTER = datetime.datetime(9999, 12, 31, 23, 59, 59, tzinfo=datetime.UTC)
"""RFC 5280 §4.1.2.5's "no well-defined expiration": the pin is the key, not a date."""


def certificate_pem(identity: Identity) -> bytes:
    """The node's self-signed certificate, PEM; the same bytes on every call for one key."""
    from cryptography import x509  # about 10 ms: only where a certificate is built or read
    from cryptography.x509.oid import NameOID

    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"feral node {identity.node_id}")])
    serial = int.from_bytes(hashlib.sha256(identity.public_key).digest()[:16], "big") >> 1
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(identity.private_key.public_key())
        .serial_number(serial or 1)
        .not_valid_before(_NOT_BEFORE)
        .not_valid_after(_NOT_AFTER)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
    )
    certificate = builder.sign(identity.private_key, algorithm=None)
    return certificate.public_bytes(Encoding.PEM)


def certificate_der(pem: bytes) -> bytes:
    """The DER bytes of a PEM certificate (what a TLS peer presents)."""
    from cryptography import x509

    return x509.load_pem_x509_certificate(pem).public_bytes(Encoding.DER)


def certificate_fingerprint(der: bytes) -> str:
    """SHA-256 over the DER certificate, as ``openssl x509 -fingerprint -sha256`` prints it."""
    digest = hashlib.sha256(der).hexdigest().upper()
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


def identity_fingerprint(identity: Identity) -> str:
    """The SHA-256 fingerprint of ``identity``'s certificate (the same for every rebuild)."""
    return certificate_fingerprint(certificate_der(certificate_pem(identity)))


def certificate_node_id(der: bytes) -> NodeId | None:
    """The node id the certificate's key has, or ``None`` if it holds no Ed25519 key."""
    from cryptography import x509

    try:
        key = x509.load_der_x509_certificate(der).public_key()
    except ValueError:
        return None
    if not isinstance(key, Ed25519PublicKey):
        return None
    return node_id_for(key.public_bytes(Encoding.Raw, PublicFormat.Raw))


def ensure_certificate(home: Path, identity: Identity) -> Path:
    """``<home>/node.crt`` for ``identity``, (re)written when missing or not this key's.

    Raises:
        HomeFileError: the file cannot be written (the message names it).
    """
    path = home / CERT_FILENAME
    wanted = certificate_pem(identity)
    try:
        current = path.read_bytes()
    except OSError:
        current = b""
    if current != wanted:
        write_private_file(path, wanted)
    return path


def server_context(home: Path, identity: Identity) -> ssl.SSLContext:
    """TLS 1.3 only, the node's certificate, no client certificate asked (see the module doc)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.verify_mode = ssl.CERT_NONE
    context.load_cert_chain(ensure_certificate(home, identity), home / KEY_FILENAME)
    return context


def client_context() -> ssl.SSLContext:
    """TLS 1.3 only, no CA validation: the dialler pins the peer's key to its id instead."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def plaintext_refusal(url: str) -> str | None:
    """Why dialling ``url`` is refused without ``--insecure-plaintext``, or ``None`` if it is not.

    A ``ws://`` link beyond this machine carries every fact in clear; loopback stays allowed.
    """
    parts = urlsplit(url)
    if parts.scheme != "ws" or is_loopback_host(parts.hostname or ""):
        return None
    return (
        f"{url} is plain ws:// to another machine: every fact would travel unencrypted; use "
        "wss:// (feral serve serves TLS beyond loopback), or pair with --insecure-plaintext"
    )
