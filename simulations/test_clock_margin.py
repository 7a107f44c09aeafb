"""Two devices almost two windows apart, each within the window of the server between them.

The long run of the skewed-clocks machine found this (seed 2100008958): the laptop, 299,999 ms
fast, writes; the server relays to the phone, 299,999 ms slow. The phone would take the stamp
(it is within twice the window of its clock) but the server keeps a margin for its estimate of
the phone's clock (sync/held_back.py ``SEND_MARGIN_MS``) and holds the entry back. The link goes
quiet with the phone one entry short, which is the design; the entry must then come once time
passes, at the next anti-entropy tick, with no page ever refused.
"""

from __future__ import annotations

from feral.storage.memory import export, memories

from .cluster import Cluster
from .simnode import MAX_SKEW_MS

SERVER, PHONE, LAPTOP = 0, 1, 2


def test_an_entry_held_back_inside_the_margin_arrives_once_time_passes() -> None:
    cluster = Cluster(3, "star", page_limit=1)
    try:
        server, phone, laptop = (cluster.nodes[i] for i in (SERVER, PHONE, LAPTOP))
        phone.wall.skew_ms = -(MAX_SKEW_MS - 1)
        laptop.wall.skew_ms = MAX_SKEW_MS - 1
        for edge in range(len(cluster.edges)):
            cluster.connect(*cluster.ends(edge))
        laptop.commit(memories.remember_fact, ("alice", "likes", "tea"), now_ms=laptop.wall())
        cluster.settle(1_000)
        assert len(list(export.export_lines(server.conn))) == 1
        assert list(export.export_lines(phone.conn)) == []  # held back, not refused
        assert cluster.stats["page_refused_clock_skew"] == 0
        cluster.pass_the_newest_stamp()
        cluster.settle(1_000)
        cluster.check_step()
        cluster.check_converged()
        assert len(list(export.export_lines(phone.conn))) == 1
    finally:
        cluster.close()
