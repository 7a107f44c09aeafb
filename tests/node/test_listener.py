"""The checks ``feral serve`` makes before it creates anything (node/serve/listener.py)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from feral.node.serve.listener import open_listener, sole_server
from feral.sync.errors import NotAvailable


def test_a_port_in_use_is_refused_with_its_number() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(NotAvailable, match=f"port {port} is in use on 127.0.0.1"):
            open_listener("127.0.0.1", port)


def test_port_0_listens_on_a_free_port() -> None:
    listener = open_listener("127.0.0.1", 0)
    try:
        assert listener.getsockname()[1] > 0
    finally:
        listener.close()


def test_an_address_of_another_machine_is_refused() -> None:
    with pytest.raises(NotAvailable, match="not an address of this machine"):
        open_listener("192.0.2.1", 0)  # TEST-NET-1: never this machine's


def test_two_servers_starting_at_once_on_one_home_cannot_both_hold_it(tmp_path: Path) -> None:
    with sole_server(tmp_path):
        with pytest.raises(NotAvailable, match="already running"), sole_server(tmp_path):
            pass
    with sole_server(tmp_path):  # released when the first stopped
        pass
