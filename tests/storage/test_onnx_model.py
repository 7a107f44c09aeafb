"""storage/encoders/onnx_model.py: the default encoder, checked against all-MiniLM-L6-v2 run by
torch.

torch is never imported here. ``data/minilm_l6_reference.npz`` holds 300 texts and the vectors
sentence-transformers gave them in float32 (stored as float16), written by
``storage/encoders/models/export_minilm.py --reference`` when the shipped model was made.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

import feral.storage.encoders.onnx_model as onnx_model
from feral.storage.db.errors import ModelUnavailable
from feral.storage.encoders.embedders import DEFAULT_EMBEDDER, MODELS_DIR
from feral.storage.encoders.onnx_model import OnnxEmbedder
from feral.storage.vectors.vectors import Embedder, pack_vector
from feral.sync.errors import FeralError

SHIPPED = MODELS_DIR / DEFAULT_EMBEDDER
REFERENCE = Path(__file__).parent / "data" / "minilm_l6_reference.npz"
WAY_OUT = 'set memory.embedder in settings.json to "minilm-static-256"'


@pytest.fixture(scope="module")
def model() -> OnnxEmbedder:
    return OnnxEmbedder(SHIPPED)


@pytest.fixture(scope="module")
def reference() -> tuple[list[str], np.ndarray]:
    data = np.load(REFERENCE, allow_pickle=False)
    return [str(s) for s in data["sentences"]], data["vectors"].astype(np.float32)


def copy_of_model(tmp_path: Path) -> Path:
    target = tmp_path / "model"
    shutil.copytree(SHIPPED, target)
    return target


def refresh_digest(directory: Path, filename: str) -> None:
    """Make config.json vouch for ``filename`` as it now is (so only its content is wrong)."""
    config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    config["sha256"][filename] = hashlib.sha256((directory / filename).read_bytes()).hexdigest()
    (directory / "config.json").write_text(json.dumps(config), encoding="utf-8")


# -- what ships --------------------------------------------------------------------------------


def test_the_model_ships_with_its_licence_and_no_local_paths() -> None:
    names = {p.name for p in SHIPPED.iterdir()}
    assert {"config.json", "tokenizer.json", "model.onnx", "LICENSE", "NOTICE"} <= names
    assert "Apache License" in (SHIPPED / "LICENSE").read_text(encoding="utf-8")
    notice = " ".join((SHIPPED / "NOTICE").read_text(encoding="utf-8").split())
    assert "all-MiniLM-L6-v2" in notice and "Apache License, Version 2.0" in notice
    config = json.loads((SHIPPED / "config.json").read_text(encoding="utf-8"))
    assert config["source"]["license"] == "Apache-2.0"
    assert "per channel" in config["export"]["quantization"]
    for name in ("config.json", "tokenizer.json"):
        text = (SHIPPED / name).read_text(encoding="utf-8")
        for local in ("site-packages", tempfile.gettempdir(), str(Path.home())):
            assert local not in text, (name, local)


def test_the_model_is_named_and_sized_as_its_config_says(model: OnnxEmbedder) -> None:
    assert (model.name, model.dim) == ("minilm-l6-int8", 384)
    embedder: Embedder = model  # the protocol storage/vectors/vectors.py embeds with (mypy checks)
    assert embedder is model
    assert 20_000_000 < (SHIPPED / "model.onnx").stat().st_size < 25_000_000  # int8, not float32


# -- the vectors -------------------------------------------------------------------------------


@pytest.mark.slow
def test_vectors_follow_all_minilm_l6_v2_run_by_torch(
    model: OnnxEmbedder, reference: tuple[list[str], np.ndarray]
) -> None:
    """int8 weights with int8 activations (scaled per batch) measure min 0.949 (on "ok"),
    mean 0.992, and 91% of texts at 0.99 or more; the bounds leave room for other CPUs."""
    sentences, expected = reference
    assert len(sentences) == 300
    cosines = (model.embed_array(sentences) * expected).sum(axis=1)
    assert cosines.mean() >= 0.99
    assert cosines.min() >= 0.94, sentences[int(cosines.argmin())]
    assert (cosines >= 0.99).mean() >= 0.85


def test_every_text_gets_a_finite_unit_vector(model: OnnxEmbedder) -> None:
    texts = ["Booked flights to Lisbon", "", "   ", "\u2603", "word " * 3000, "a"]
    vectors = model.embed(texts)
    assert len(vectors) == len(texts)
    for vector in vectors:
        assert len(vector) == 384
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-4)
        pack_vector(vector, model.dim)  # finite, so storable
    assert model.embed([]) == []


def test_a_text_gets_the_same_vector_whatever_it_is_embedded_with(model: OnnxEmbedder) -> None:
    """Dynamic quantisation takes the activations' int8 scale over a whole run, padding
    included: in one batch these texts measured 0.988 to themselves alone, so each runs alone."""
    texts = ["my doctor's name is Dr. Chen", "vehicle maintenance appointment", "word " * 300]
    together = model.embed_array(texts)
    for text, vector in zip(texts, together, strict=True):
        assert np.array_equal(model.embed_array([text])[0], vector)
    assert np.array_equal(model.embed_array(texts[::-1])[::-1], together)


def test_a_paraphrase_is_nearer_than_a_look_alike(model: OnnxEmbedder) -> None:
    memory, query, decoy = model.embed_array([
        "The car is booked in for winter tyres at the garage on Tuesday",
        "vehicle maintenance appointment",
        "Booked a table at the Italian restaurant on Tuesday",
    ])  # fmt: skip
    assert float(memory @ query) > float(memory @ decoy) + 0.1


def test_two_threads_give_the_same_vectors(model: OnnxEmbedder) -> None:
    texts = ["Renewed my passport at the consulate", "travel document renewal"]
    two = OnnxEmbedder(SHIPPED, threads=2).embed_array(texts)
    assert np.allclose(two, model.embed_array(texts), atol=1e-4)


# -- a missing runtime or model fails loudly, naming the way out -------------------------------


def test_a_missing_model_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match=r"config\.json is missing") as caught:
        OnnxEmbedder(tmp_path / "nowhere")
    assert isinstance(caught.value, FeralError)
    assert WAY_OUT in str(caught.value) and '"none"' in str(caught.value)


def test_a_missing_onnxruntime_names_the_light_model(monkeypatch: pytest.MonkeyPatch) -> None:
    real = onnx_model.importlib.util.find_spec
    monkeypatch.setattr(
        onnx_model.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "onnxruntime" else real(name, *a),
    )
    with pytest.raises(ModelUnavailable, match="needs onnxruntime, which is missing") as caught:
        OnnxEmbedder(SHIPPED)
    assert WAY_OUT in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("filename", ["model.onnx", "tokenizer.json"])
def test_a_missing_file_is_named(tmp_path: Path, filename: str) -> None:
    directory = copy_of_model(tmp_path)
    (directory / filename).unlink()
    with pytest.raises(ModelUnavailable, match=f"{filename} is missing"):
        OnnxEmbedder(directory)


@pytest.mark.parametrize("filename", ["model.onnx", "tokenizer.json"])
def test_a_changed_byte_is_caught_by_the_checksum(tmp_path: Path, filename: str) -> None:
    directory = copy_of_model(tmp_path)
    path = directory / filename
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(ModelUnavailable, match=f"{filename} is damaged"):
        OnnxEmbedder(directory)


def test_a_graph_that_does_not_load_is_refused_when_first_used(tmp_path: Path) -> None:
    directory = copy_of_model(tmp_path)
    (directory / "model.onnx").write_bytes(b"not an onnx graph")
    refresh_digest(directory, "model.onnx")
    embedder = OnnxEmbedder(directory)  # files check out; the session is made on first use
    with pytest.raises(ModelUnavailable, match="model.onnx is not a usable ONNX model"):
        embedder.embed(["hello"])


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{", "is not valid JSON"),
        ("[]", "is not a JSON object"),
        ('{"format": "feral-static-embedding/1"}', "is not in the format"),
        ('{"format": "feral-onnx-embedding/1"}', "lacks the key"),
    ],
)
def test_a_broken_config_is_refused(tmp_path: Path, content: str, problem: str) -> None:
    directory = copy_of_model(tmp_path)
    (directory / "config.json").write_text(content, encoding="utf-8")
    with pytest.raises(ModelUnavailable, match=problem):
        OnnxEmbedder(directory)


def test_a_config_naming_other_inputs_is_refused(tmp_path: Path) -> None:
    directory = copy_of_model(tmp_path)
    config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    config["inputs"] = ["input_ids", "token_type_ids"]
    (directory / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ModelUnavailable, match="takes the inputs"):
        OnnxEmbedder(directory).embed(["hello"])
