"""node/links/tls.py and node/links/pinned.py: the certificate made from the node key, and the
pin."""

from __future__ import annotations

import asyncio
import datetime
import ssl
import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import NameOID

from feral.node.home.identity import load_or_create_identity
from feral.node.links.pinned import PinMismatch, check_pin
from feral.node.links.tls import (
    CERT_FILENAME,
    certificate_der,
    certificate_node_id,
    certificate_pem,
    client_context,
    ensure_certificate,
    plaintext_refusal,
    server_context,
)


def test_the_certificate_carries_the_node_key_and_is_the_same_every_time(tmp_path: Path) -> None:
    identity = load_or_create_identity(tmp_path / "home")
    pem = certificate_pem(identity)
    assert pem == certificate_pem(identity)
    assert certificate_node_id(certificate_der(pem)) == identity.node_id


def test_the_certificate_file_is_private_and_rewritten_when_missing_or_wrong(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    identity = load_or_create_identity(home)
    path = ensure_certificate(home, identity)
    assert path == home / CERT_FILENAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    wanted = path.read_bytes()
    path.write_bytes(certificate_pem(load_or_create_identity(tmp_path / "other")))
    ensure_certificate(home, identity)
    assert path.read_bytes() == wanted
    path.unlink()
    ensure_certificate(home, identity)
    assert path.read_bytes() == wanted


def rsa_certificate_der() -> bytes:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "example.org")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    return cert.public_bytes(Encoding.DER)


class _Presenting:
    """Stands in for an ssl object: what ``getpeercert(binary_form=True)`` gives."""

    def __init__(self, der: bytes | None) -> None:
        self.der = der

    def getpeercert(self, binary_form: bool = False) -> bytes | None:
        return self.der


def test_the_pin_refuses_another_node_a_non_node_certificate_and_none(tmp_path: Path) -> None:
    ours = load_or_create_identity(tmp_path / "ours")
    other = load_or_create_identity(tmp_path / "other")
    good = certificate_der(certificate_pem(ours))
    assert check_pin(_Presenting(good), ours.node_id)  # type: ignore[arg-type]
    cases = {
        "node " + other.node_id: certificate_der(certificate_pem(other)),
        "no Ed25519 node key": rsa_certificate_der(),
        "no certificate": None,
    }
    for expected_text, der in cases.items():
        with pytest.raises(PinMismatch, match=expected_text) as caught:
            check_pin(_Presenting(der), ours.node_id)  # type: ignore[arg-type]
        assert ours.node_id in str(caught.value)


async def test_the_server_speaks_tls_1_3_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    identity = load_or_create_identity(home)

    async def answer(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=server_context(home, identity))
    port = server.sockets[0].getsockname()[1]
    async with server:
        _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client_context())
        assert writer.get_extra_info("ssl_object").version() == "TLSv1.3"
        writer.close()
        old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        old.check_hostname, old.verify_mode = False, ssl.CERT_NONE
        old.maximum_version = ssl.TLSVersion.TLSv1_2
        with pytest.raises((ssl.SSLError, ConnectionError)):  # refused in the handshake
            await asyncio.open_connection("127.0.0.1", port, ssl=old)


def test_plain_ws_is_refused_beyond_loopback_only() -> None:
    assert plaintext_refusal("ws://127.0.0.1:9090") is None
    assert plaintext_refusal("ws://localhost:9090") is None
    assert plaintext_refusal("ws://[::1]:9090") is None
    assert plaintext_refusal("wss://192.0.2.1:9090") is None
    refusal = plaintext_refusal("ws://192.0.2.1:9090")
    assert refusal is not None and "--insecure-plaintext" in refusal
    assert plaintext_refusal("ws://laptop.local:9090") is not None
