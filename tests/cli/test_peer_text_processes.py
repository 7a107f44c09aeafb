"""Text from a peer's URL reaches the user escaped, as real ``feral`` processes (issue 11, #10).

Whatever answers at a paired peer's URL may send an Error frame before any handshake; its code
and message must never reach a terminal raw (escape sequences, forged lines) through ``sync
now``, ``sync status`` (where it is kept as ``last_error``) or the serve log.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator

import pytest
from websockets.asyncio.server import ServerConnection, serve

from feral.sync.codec import encode_message
from feral.sync.messages import ErrorMessage

from .servers import Mesh, free_port, wait_until

CODE = "\x1b[31mred"
MESSAGE = "boom\nforged line\r\x07"
STRANGER = "a" * 32
"""A well-formed node id that no one holds: the endpoint never gets as far as saying who it is."""


@contextlib.contextmanager
def refusing_endpoint(frame: bytes) -> Iterator[int]:
    """A WebSocket endpoint that sends ``frame`` to whoever connects, then closes; its port."""
    port = free_port()
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    stop: asyncio.Future[None] = loop.create_future()

    async def answer(ws: ServerConnection) -> None:
        await ws.send(frame)
        await ws.close()

    async def main() -> None:
        async with serve(answer, "127.0.0.1", port, compression=None):
            ready.set()
            await stop

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    try:
        assert ready.wait(10), "the endpoint did not start"
        yield port
    finally:
        loop.call_soon_threadsafe(stop.set_result, None)
        thread.join(10)
        loop.close()


def assert_no_raw_controls(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert "\nforged line" not in text


@pytest.mark.slow
def test_an_error_frame_before_the_handshake_is_printed_raw(mesh: Mesh) -> None:
    (laptop,) = mesh.add("laptop")
    with refusing_endpoint(encode_message(ErrorMessage(CODE, MESSAGE))) as port:
        laptop.cli("sync", "peers", "add", f"ws://127.0.0.1:{port}", "--node-id", STRANGER)
        result = laptop.run("sync", "now", check=False)
        assert result.returncode == 1
        assert_no_raw_controls(result.stdout + result.stderr)
        assert "boom\\nforged line\\r\\x07" in result.stderr  # shown, escaped

        stored = laptop.json("sync", "status")["peers"][0]["last_error"]
        assert_no_raw_controls(stored)
        assert "boom\\nforged line" in stored
        assert_no_raw_controls(laptop.run("sync", "status").stdout)

        mesh.start(laptop)  # serve dials the endpoint too, and logs the refusal
        assert wait_until(lambda: "forged line" in laptop.serve_log(), 20), laptop.serve_log()
        assert_no_raw_controls(laptop.serve_log())
