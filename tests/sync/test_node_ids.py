"""Ids made from keys and from other ids (sync/ids.py): a node id is the key's hash, spelled as
every device checks it; text that is not Unicode makes no id."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from feral.sync.delta import check_node_id
from feral.sync.errors import SchemaError
from feral.sync.ids import PUBLIC_KEY_LENGTH, edge_id, node_id_for, reborn_id

keys = st.binary(min_size=PUBLIC_KEY_LENGTH, max_size=PUBLIC_KEY_LENGTH)


@given(keys, keys)
def test_a_node_id_is_a_valid_id_of_its_key_alone(key: bytes, other: bytes) -> None:
    node_id = node_id_for(key)
    assert check_node_id(node_id) == node_id == node_id_for(bytes(key))
    assert len(node_id) == 32 and node_id == node_id.lower()
    assert (node_id_for(other) == node_id) == (other == key)


@pytest.mark.parametrize("length", [0, PUBLIC_KEY_LENGTH - 1, PUBLIC_KEY_LENGTH + 1, 64])
def test_a_key_of_another_length_has_no_node_id(length: int) -> None:
    with pytest.raises(ValueError, match=f"not {length}"):
        node_id_for(bytes(length))


def test_an_id_made_from_text_that_is_not_unicode_is_refused() -> None:
    with pytest.raises(SchemaError, match="Unicode"):
        reborn_id("f\ud800")
    with pytest.raises(SchemaError, match="Unicode"):
        edge_id("supports", "f1", "f\udfff")
