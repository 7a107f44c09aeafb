"""A bulk ``feral memory import`` beside a running ``feral serve``: the device keeps syncing.

The laptop serves and dials the phone, which serves too. While an import of a few thousand
lines runs on the laptop as a process of its own, the phone keeps writing; each write must
reach the laptop while the import runs, and the phone's next write after it ends too. The
import and the serve share the home's one SQLite write lock: an import that takes it again the
moment it lets it go leaves the serve waiting past its busy timeout, and the serve's link to
the phone ends with ``storage_error`` each time it tries to store what the phone sent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from feral.storage.encoders.embedders import DEFAULT_EMBEDDER

from .servers import FeralNode, Mesh, pair, wait_until

IMPORT_LINES = 20_000
ARRIVAL_S = 45.0
"""Generous for a loopback link between two serves; the regression left the phone's next
write missing on the laptop after 90 s."""
LOCKED = "database is locked"


def big_file(node: FeralNode, lines: int = IMPORT_LINES) -> Path:
    path = node.home.parent / f"{node.name}-bulk.txt"
    texts = (f"crate {i} of the cellar holds {i * 7919 % 10007} bottles" for i in range(lines))
    path.write_text("".join(f"{text}\n" for text in texts), encoding="utf-8")
    return path


def holds(node: FeralNode, text: str) -> bool:
    return bool(node.query("SELECT 1 FROM facts WHERE object = ?", text))


@pytest.mark.slow
def test_a_bulk_import_beside_serve_never_stops_the_device_from_syncing(mesh: Mesh):
    laptop, phone = mesh.add("laptop", "phone", embedder=DEFAULT_EMBEDDER)
    pair(laptop, phone, dial=True)
    pair(phone, laptop, dial=False)
    mesh.start(laptop, phone)
    phone.cli("memory", "remember", "warm-up from the phone")
    assert wait_until(lambda: holds(laptop, "warm-up from the phone"), ARRIVAL_S), "no link"

    written: list[str] = []
    with laptop.spawn("memory", "import", str(big_file(laptop))) as importing:
        assert wait_until(lambda: laptop.count() > 100, 120), "the import wrote nothing"
        while importing.poll() is None:
            written.append(f"errand {len(written)} noted on the phone")
            phone.run("memory", "remember", written[-1])  # one process at a time: paced
        _, err = importing.communicate(timeout=600)
        assert importing.returncode == 0, err
    assert written, "the import ended before the phone wrote"
    assert LOCKED not in laptop.serve_log(), laptop.serve_log()

    phone.run("memory", "remember", "the boiler service is booked for Friday")
    written.append("the boiler service is booked for Friday")
    arrived = wait_until(lambda: all(holds(laptop, t) for t in written), ARRIVAL_S, 0.2)
    missing = [t for t in written if not holds(laptop, t)]
    assert arrived, f"missing on the laptop after {ARRIVAL_S} s: {missing}"
    last = f"crate {IMPORT_LINES - 1} of the cellar holds"
    reached = wait_until(
        lambda: phone.query("SELECT 1 FROM facts WHERE object LIKE ?", f"{last}%"), ARRIVAL_S
    )
    assert reached, "the imported rows did not reach the phone"
