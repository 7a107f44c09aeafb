"""storage/encoders/embedders.py: the ``memory.embedder`` setting, mapped to a shipped model or to
none."""

from __future__ import annotations

import pytest

from feral.storage.encoders.embedders import (
    DEFAULT_EMBEDDER,
    EMBEDDER_CHOICES,
    STATIC_EMBEDDER,
    load_embedder,
)
from feral.storage.encoders.onnx_model import THREADS_ENV, OnnxEmbedder
from feral.storage.encoders.static_model import StaticEmbedder
from feral.sync.errors import ConfigError


def test_the_default_is_the_onnx_encoder_and_it_is_loaded_once_per_process() -> None:
    default = load_embedder(None)
    assert isinstance(default, OnnxEmbedder)
    assert (default.name, default.dim) == (DEFAULT_EMBEDDER, 384) == ("minilm-l6-int8", 384)
    assert load_embedder(DEFAULT_EMBEDDER) is default


def test_the_static_model_stays_as_the_light_choice() -> None:
    static = load_embedder(STATIC_EMBEDDER)
    assert isinstance(static, StaticEmbedder)
    assert (static.name, static.dim) == ("minilm-static-256", 256)
    assert load_embedder("minilm-static-256") is static


def test_none_turns_the_vector_leg_off() -> None:
    assert load_embedder("none") is None
    assert EMBEDDER_CHOICES == ("minilm-l6-int8", "minilm-static-256", "none")


@pytest.mark.parametrize("name", ["hashing-64", "all-MiniLM-L6-v2", "", "NONE"])
def test_an_unknown_embedder_is_a_config_error_naming_it_and_the_choices(name: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_embedder(name)
    message = str(caught.value)
    assert repr(name) in message
    assert "memory.embedder" in message
    assert '"minilm-l6-int8"' in message and '"minilm-static-256"' in message


@pytest.mark.parametrize("value", ["0", "-1", "two", "65", "1.5"])
def test_a_bad_thread_count_is_a_config_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(THREADS_ENV, value)
    with pytest.raises(ConfigError, match=THREADS_ENV):
        load_embedder(None)
