"""Fixed scenarios of mixed versions on the simulated cluster (simulations/version_rules.py):
the rules the convergence machine draws, run once on a chain where the relay never wrote the
newer column, so a relay that dropped it or an edit that wiped it shows here at once."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from feral.storage.memory import export, memories
from feral.sync.ids import fact_id

from .cluster import Cluster
from .simnode import SimNode
from .test_convergence import ConvergenceMachine
from .version_rules import write_newer_column

TRIPLE = ("the sky", "is", "blue")


@pytest.fixture
def chain() -> Iterator[Cluster]:
    """phone—server—laptop: the phone and the laptop never meet."""
    cluster = Cluster(3, "chain", page_limit=2)
    yield cluster
    cluster.close()


def fact_line(node: SimNode) -> dict[str, object]:
    (line,) = [json.loads(x) for x in export.export_lines(node.conn) if '"facts"' in x]
    return dict(line)


def settle(cluster: Cluster) -> None:
    cluster.settle(1_000)
    cluster.check_step()
    cluster.check_converged()


def test_a_newer_column_crosses_the_relay_and_survives_its_edit(chain: Cluster) -> None:
    server, phone, laptop = chain.nodes
    laptop.commit(write_newer_column, TRIPLE, "teal", now_ms=laptop.wall())
    settle(chain)
    assert fact_line(phone)["_opaque"] == ["teal"]
    server.commit(memories.set_archived, fact_id(*TRIPLE), True)  # the relay edits the row
    settle(chain)
    for node in chain.nodes:
        line = fact_line(node)
        assert (line["archived"], line["_opaque"]) == (True, ["teal"]), node.name


def test_a_link_without_a_common_protocol_is_refused_and_changes_nothing(
    chain: Cluster,
) -> None:
    machine = ConvergenceMachine()
    machine.cluster = chain
    laptop = chain.nodes[2]
    laptop.commit(memories.remember_fact, TRIPLE, now_ms=laptop.wall())
    for newer_first in (True, False):
        machine.link_without_a_common_protocol(0, 2, newer_first)
