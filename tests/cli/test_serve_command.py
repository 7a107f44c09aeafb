"""``feral serve``'s API token messages (the service is stubbed: the port is bound, and closed
without serving)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from feral.node.serve.service import SyncService

from .helpers import feral, init_home
from .servers import free_port


@pytest.fixture(autouse=True)
def _initialised(tmp_path: Path) -> None:
    """Every case's home made by ``feral init`` first: no other command makes one."""
    init_home(tmp_path)


@pytest.fixture
def no_bind(monkeypatch: pytest.MonkeyPatch) -> None:
    async def run(self: SyncService, started=None) -> None:
        if started is not None:
            started()

    monkeypatch.setattr(SyncService, "run", run)


def test_serve_off_loopback_writes_a_private_token_and_says_where(tmp_path, no_bind):
    port = free_port()
    result = feral(tmp_path, "serve", "--host", "0.0.0.0", "--port", str(port))
    assert result.exit_code == 0, result.output
    path = tmp_path / "api_token"
    token = path.read_text().strip()
    assert len(token) >= 32
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert f"a new one was written to {path}" in result.stderr
    assert token not in result.output
    assert f"serving wss://0.0.0.0:{port}/sync and https://0.0.0.0:{port}/api" in result.stderr
    again = feral(tmp_path, "serve", "--host", "::", "--port", str(port))
    assert f"it is in {path}" in again.stderr
    assert f"https://[::]:{port}/api" in again.stderr
    assert path.read_text().strip() == token


def test_serve_off_loopback_serves_tls_unless_told_not_to(tmp_path, no_bind):
    """TLS by default beyond loopback, with the certificate's fingerprint; ``--no-tls`` warns;
    ``--tls`` on loopback (issue 13)."""
    port = str(free_port())
    result = feral(tmp_path, "serve", "--host", "0.0.0.0", "--port", port)
    fingerprint = feral(tmp_path, "sync", "cert").stdout.splitlines()[1].split()[1]
    assert f"TLS certificate sha256 {fingerprint}" in result.stderr
    assert stat.S_IMODE(os.stat(tmp_path / "node.crt").st_mode) == 0o600
    plain = feral(tmp_path, "serve", "--host", "0.0.0.0", "--port", port, "--no-tls")
    assert f"serving ws://0.0.0.0:{port}/sync and http://0.0.0.0:{port}/api" in plain.stderr
    assert "--no-tls on 0.0.0.0: links and the API are not encrypted" in plain.stderr
    local = feral(tmp_path, "serve", "--port", port, "--tls")
    assert f"serving wss://127.0.0.1:{port}/sync" in local.stderr
    assert "not encrypted" not in local.stderr
    assert f"serving ws://127.0.0.1:{port}/sync" in feral(tmp_path, "serve", "--port", port).stderr


def test_serve_on_loopback_needs_no_token(tmp_path, no_bind):
    result = feral(tmp_path, "serve", "--port", str(free_port()))
    assert result.exit_code == 0, result.output
    assert "Bearer" not in result.stderr
    assert not (tmp_path / "api_token").exists()


def test_an_unusable_token_file_stops_serve_with_one_line(tmp_path, no_bind):
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "api_token").write_text("short")
    (tmp_path / "api_token").chmod(0o600)
    result = feral(tmp_path, "serve", "--host", "0.0.0.0", "--port", str(free_port()))
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ") and "api_token" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
