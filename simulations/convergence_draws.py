"""What the convergence machine's rules draw: the facts they write and the devices they pick.

Shared by simulations/test_convergence.py and the memory-model rules it inherits
(simulations/memory_rules.py), so both draw from one ``triples`` bundle and one strategy.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import Bundle

__all__ = ["Triple", "node_index", "triple_strategy", "triples"]

Triple = tuple[str, str, str]

# Subjects differ in case and objects in spacing, so different texts share one fact id and
# writes collide on rows with different values (fact ids use the caseless, stripped form).
triple_strategy = st.tuples(
    st.sampled_from(["alice", "Alice", "bob"]),
    st.sampled_from(["likes", "knows"]),
    st.sampled_from(["tea", "coffee", " Tea"]),
)
node_index = st.integers(0, 4)

triples: Bundle[Triple] = Bundle("triples")
"""The facts written so far (and some yet to be), which the write rules pick from."""
