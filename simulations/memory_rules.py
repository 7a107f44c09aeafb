"""The convergence machine's rules for the memory model: meta rows, edges and entities.

What the absorb pipeline and curation write besides facts (supersedes with their edges and meta
rows, boosts, typed links, entities named on colliding names and relations between them), as
a mixin :class:`~simulations.test_convergence.ConvergenceMachine` inherits: hypothesis collects
``@rule`` methods from base classes, so these run in the same machine, on the same ``triples``
bundle (simulations/convergence_draws.py), and are checked by the same steps and teardown.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import rule

from feral.storage.memory import curation, graph, memory_model
from feral.storage.memory.memory_model import EDGE_TYPES, Meta, add_edge, write_meta
from feral.sync.ids import fact_id

from .cluster import Cluster
from .convergence_draws import Triple, node_index, triples
from .memory_writes import supersede as supersede_fact
from .simnode import SimNode

__all__ = ["KINDS", "PLACES", "MemoryModelRules"]

KINDS = ["place", "Place"]
PLACES = ["Berlin", "berlin", " BERLIN ", "Porto"]
"""Entity names that collide after normalisation (and one that does not)."""


class MemoryModelRules:
    """Rules writing meta rows, edges and entities on the machine's devices (a mixin: the
    machine provides its cluster and picks its devices)."""

    @property
    def c(self) -> Cluster:
        raise NotImplementedError

    def node(self, i: int) -> SimNode:
        raise NotImplementedError

    @rule(
        node=node_index,
        other=st.integers(1, 4),
        triple=triples,
        importance=st.sampled_from([0.5, 2.0, 10.0]),
    )
    def boost_on_two(self, node: int, other: int, triple: Triple, importance: float) -> None:
        """Two devices boost one memory at once: the first writes its meta row outright (the
        memory need not be stored there), the second through ``boost`` (refused if the memory
        is not live there). The meta row collides; the fact's own row is not touched."""
        first = self.node(node)
        second = self.node((node + other) % len(self.c.nodes))
        row_id = fact_id(*triple)
        first.commit(write_meta, Meta(row_id, importance=importance, updated_at=first.wall()))
        if second is not first:
            second.commit(curation.boost, row_id, importance + 1.0, f"from {second.name}")

    # -- what the absorb pipeline writes: supersedes, edges and meta rows -----------------------

    @rule(node=node_index, old=triples, new=triples, category=st.sampled_from(["context", "note"]))
    def supersede(self, node: int, old: Triple, new: Triple, category: str) -> None:
        """``new`` supersedes ``old`` (the old row archived, an edge, the new meta row)."""
        if fact_id(*old) != fact_id(*new):
            n = self.node(node)
            n.commit(supersede_fact, new, fact_id(*old), category=category, now_ms=n.wall())

    @rule(node=node_index, other=st.integers(1, 4), old=triples, a=triples, b=triples)
    def supersede_on_two(self, node: int, other: int, old: Triple, a: Triple, b: Triple) -> None:
        """Two devices each supersede one fact with a value of their own (two doctors): both
        new values stay live, the old one is archived on both."""
        first, second = self.node(node), self.node((node + other) % len(self.c.nodes))
        for n, new in ((first, a), (second, b)):
            if fact_id(*old) != fact_id(*new):
                n.commit(supersede_fact, new, fact_id(*old), category="context", now_ms=n.wall())

    @rule(
        node=node_index,
        a=triples,
        b=triples,
        edge_type=st.sampled_from(EDGE_TYPES),
        note=st.sampled_from(["", "same trip", "see also"]),
    )
    def link(self, node: int, a: Triple, b: Triple, edge_type: str, note: str) -> None:
        """A typed edge; the same link (and type) made elsewhere is the same row, and a
        different note on it collides."""
        n = self.node(node)
        n.commit(add_edge, edge_type, fact_id(*a), fact_id(*b), now_ms=n.wall(), note=note)

    @rule(
        node=node_index,
        triple=triples,
        importance=st.sampled_from([1.0, 2.0, 0.5]),
        category=st.sampled_from(["preference", "identity"]),
    )
    def boost(self, node: int, triple: Triple, importance: float, category: str) -> None:
        """A meta row (category and importance) written on a row others may write too."""
        n = self.node(node)
        meta = Meta(fact_id(*triple), category=category, importance=importance,
                    importance_note="boosted", updated_at=n.wall())  # fmt: skip
        n.commit(write_meta, meta)

    @rule(node=node_index, kind=st.sampled_from(KINDS), name=st.sampled_from(PLACES))
    def name_entity(self, node: int, kind: str, name: str) -> None:
        """Devices name the same entity in different spellings: one row (id from the type and
        normalised name), whose display name last-write-wins settles."""
        n = self.node(node)
        n.commit(memory_model.add_entity, kind, name, now_ms=n.wall())

    @rule(node=node_index, source=st.sampled_from(PLACES), other=st.sampled_from(PLACES))
    def relate_entities(self, node: int, source: str, other: str) -> None:
        """A relation between colliding names: both entities and the fact in one write."""
        n = self.node(node)
        n.commit(graph.relate, ("place", source), "near", ("place", other), now_ms=n.wall())
