"""storage/encoders/static_model.py: the light embedding model shipped inside feral."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from feral.storage.db.errors import ModelUnavailable
from feral.storage.encoders.embedders import MODELS_DIR, STATIC_EMBEDDER
from feral.storage.encoders.static_model import StaticEmbedder
from feral.storage.vectors.vectors import Embedder, pack_vector
from feral.sync.errors import FeralError

SHIPPED = MODELS_DIR / STATIC_EMBEDDER

# model2vec's own ``StaticModel.encode`` of these sentences, with the float32 matrix it distilled
# (before feral's float16 copy), as little-endian float16; printed by
# ``storage/encoders/models/distill.py --print-test-vectors``. model2vec itself is never imported
# here.
MODEL2VEC_REFERENCE = [
    (
        'Booked flights to Lisbon for the June holiday',
        'DrHdLtw1JaxvrViyZqh6rPihJC96LVonBauaKBuxMrJxLS+qd5wHKxyrzayFqNeptCMUsZGuoih7pl8pDyu4'
        'I8Cs1a3BL0YiB6iMsCSlLK9wLScqEylQMMgg8y4JMSGbkiquIo0wPy+7pcArNaz7KFQcRzCXrdqpe6oGKOEs'
        'LqmuJtGsnpj/J3GpN62gMDumr6uQKrOoM6wOptSrwKneJx2viqbtrAQxFaecL0Mwcaf0JxWncqwsKBorz65f'
        'LO2qBSggI4apQi06rcmmKKjMKayfoqUXIkSlVasAq7CoFiyurCUsmCOJmZQlKySEqDUqxqHyK12hOqswKIEk'
        '4qY8mHIqiqtfqwQhrSjZIaUppKL7nNYsVysFHe4pMaaiKz+geRfQJWIs76xlJwMk66qELpCowRdkIbQb86te'
        'FCApdJtaLA4UQ6izpiKnOiQfphOoM6FaKiis/KtDqDOhmynTJYOWsCIBK8+lwByaJpshBShlo1Ym+ClQqWes'
        'yKIWpbsoyBqPpUkoGSsKIRKfiKsxKbKoMSF0nUsphZ1cqq4lZKwJq4KrCSZOGSgm+il6K0upsCXUpY6oXCLI'
        'qPWoLSh1n/mj7qN7KjQqZCQJJB+nPC3zEV4qZx1PolcsISetKkIdPiDdqdylSimJJSysU6YDpIkapx2FKH4r'
        'toHqoO+mCSk=',
    ),
    (
        "my doctor's name is Dr. Chen",
        'fyByLOS0+LKcKVCvoKjlrTyxerNmG5QsIKbQpN4mLSxKpW6jEyk7qKAuCxiNJQyk3Co1qzQtyawTsGIqgqMP'
        'MO6oJaziMTMtsivpM8av0CE2NBinoyzEKIcv5aw0LUWww6k7JaurIimKIhGAd6bNrGilLLCYKc6sgSViLOau'
        'eQ8XLyYj/6QGLDWlwaozo4wtdSAarJ+fVagPLkcsmyQqoEGxDa3Vrw4t+CZ3KCqoSalvqDMlRCj3kXArMyX1'
        'K0AsCipgKhyXoKqYoceqKKiSJEGl0i67qYmu4qyRodMm7CuDKhwtuSZAJBIu9SzRpyGo4xQUrS6qgCEkHsKh'
        'lqxVKWmlqCV4qSodTyNVKjyobw4Lo62knyv3JkOp1KQiHPUtsRQQoWUptihALZesqyxZnf0hBCg/KRum/Shn'
        'pEYiT6TpKaslk5PBrHCq9ip5K5GsMigFLNik+ifbqHalfivNJ6mmepeAIJIkBaHFJOWiwipfo2CgIKj3oDos'
        'NqqiKLOfnCRcJNiloysbqj8c2KWaqjUk5aAtqZSerZoPqM4hG6YlJTCkUagBKoQnqJvSF7isN6zjotyhSSwb'
        'H1uoFSmcHD2kVahQqQMmARQaKR6tOKQppfukUCOuKAInWZ43qKqiTyZTG6UptSa8mEAeEh4EooQjPBVKoMAn'
        'iKhxKHMkYaE=',
    ),
    (
        'The quick brown fox jumps over the lazy dog.',
        'C6xTshytJLSvshGtVqlgoUypdzGWLV6aByD/sQeuJpVkq6exS6gzrBYsF7AlLP+n9xr7q7CiHaA8sN2rCDE3'
        'J50oPjBVqqqtw6+OrvuqiqiILWWsGiWSr0WrSTBUKzarWiplrJmpt6PeGVGovy3hLRmgZ6iWpZ+rw5+3LSst'
        '2iILqEMeja7Pp0asHSQXrKqqZ6byI1uofiqaLEIwvy0lpiutZK9wrCQmv6rWpT6gk673qN2tdKlnrzQoMShQ'
        'qG4s4hz2qc0oDyqBqcMmOKzAJ2KrN6asqwCpQKa7qI0aMakeJv2sgCzqrNSmJKUbpxKrNK8tLDekWCjOJE2t'
        'iCbIqqerjK6LH7IfiCw2LIOlz6Jlq4eomS5hqKYp3alJLJcnvqziKPol/Ka4mFKgXSQ+JUyhbKsyFnYsmqE8'
        'qlYrvClKoJisR6t7JpyfIqA5rAmsVyc3MPOkWiaprbmpeaj/KxUk1iURnbMkXimHrPQpIBjVoxylXyQsKUwh'
        '26jJrLSucSshpICkWaiFLOIs0arJqRQrJKhSpnWqzR5eqh8spKlZq9Alz6okq1gkn6lyKSap5KalJg+gySVE'
        'qUahEygJrYirHK1oK0+kvSOZnESrOiS9oholqh2HImamxSUqF5upCx8GKechoRDyKa8pVCo1LIskwCcmqFol'
        'wZZcrPejpig=',
    ),
]  # fmt: skip

TEXTS = [
    "Booked flights to Lisbon for the June holiday",
    "vacation travel plans",
    "Ünïcode wörds, CAPITALS and numbers 12345",
    "a",
    "word " * 3000,  # far past the 512-token limit
]


@pytest.fixture(scope="module")
def model() -> StaticEmbedder:
    return StaticEmbedder(SHIPPED)


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def norm(vector: list[float]) -> float:
    return math.sqrt(sum(x * x for x in vector))


def copy_of_model(tmp_path: Path) -> Path:
    target = tmp_path / "model"
    shutil.copytree(SHIPPED, target)
    return target


def rewrite_config(directory: Path, **changes: object) -> None:
    path = directory / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config.update(changes)
    path.write_text(json.dumps(config), encoding="utf-8")


def refresh_digest(directory: Path, filename: str) -> None:
    """Make config.json vouch for ``filename`` as it now is (so only its content is wrong)."""
    config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    config["sha256"][filename] = hashlib.sha256((directory / filename).read_bytes()).hexdigest()
    (directory / "config.json").write_text(json.dumps(config), encoding="utf-8")


# -- what ships --------------------------------------------------------------------------------


def test_the_model_ships_with_its_licence_and_no_local_paths() -> None:
    names = {p.name for p in SHIPPED.iterdir()}
    assert {"config.json", "tokenizer.json", "embeddings.npy", "LICENSE", "NOTICE"} <= names
    assert "Apache License" in (SHIPPED / "LICENSE").read_text(encoding="utf-8")
    notice = " ".join((SHIPPED / "NOTICE").read_text(encoding="utf-8").split())
    assert "all-MiniLM-L6-v2" in notice and "Apache License, Version 2.0" in notice
    config = json.loads((SHIPPED / "config.json").read_text(encoding="utf-8"))
    assert config["source"]["license"] == "Apache-2.0"
    for name in ("config.json", "tokenizer.json"):
        text = (SHIPPED / name).read_text(encoding="utf-8")
        for local in ("site-packages", "/tmp/", "/home/", "/root/", str(Path.home())):
            assert local not in text, (name, local)


def test_the_model_is_named_and_sized_as_its_config_says(model: StaticEmbedder) -> None:
    assert (model.name, model.dim) == ("minilm-static-256", 256)
    embedder: Embedder = model  # the protocol storage/vectors/vectors.py embeds with (mypy checks)
    assert embedder is model
    assert (SHIPPED / "embeddings.npy").stat().st_size < 16_000_000


# -- the vectors -------------------------------------------------------------------------------


def test_every_text_gets_a_finite_unit_vector_of_the_model_dimension(model: StaticEmbedder) -> None:
    vectors = model.embed(TEXTS)
    assert len(vectors) == len(TEXTS)
    for vector in vectors:
        assert len(vector) == 256
        assert all(math.isfinite(x) for x in vector)
        assert norm(vector) == pytest.approx(1.0, abs=1e-5)
        pack_vector(vector, model.dim)


def test_vectors_are_deterministic_across_instances_and_batches(model: StaticEmbedder) -> None:
    again = StaticEmbedder(SHIPPED)
    together = model.embed(TEXTS)
    assert again.embed(TEXTS) == together
    assert [model.embed([text])[0] for text in TEXTS] == together  # a batch changes nothing
    assert model.embed([]) == []


def test_vectors_match_model2vec_on_reference_sentences(model: StaticEmbedder) -> None:
    for sentence, packed in MODEL2VEC_REFERENCE:
        expected = np.frombuffer(base64.b64decode(packed), dtype="<f2").astype(float).tolist()
        assert cosine(model.embed([sentence])[0], expected) >= 0.999, sentence


def test_case_and_accents_are_folded_as_minilm_does(model: StaticEmbedder) -> None:
    upper, lower = model.embed(["MY DOCTOR IS DR. CHEN", "my doctor is dr. chen"])
    assert upper == lower


def test_a_paraphrase_is_nearer_than_an_unrelated_sentence(model: StaticEmbedder) -> None:
    anchor, paraphrase, other = model.embed([
        "Booked flights to Lisbon for the June holiday",
        "vacation travel plans",
        "the kitchen sink is leaking again",
    ])  # fmt: skip
    assert cosine(anchor, paraphrase) > cosine(anchor, other) + 0.2


@pytest.mark.parametrize("text", ["", "   \n\t", "\u2603\u2604", "x" * 500])
def test_a_text_with_no_known_token_gets_the_zero_vector(model: StaticEmbedder, text: str) -> None:
    (vector,) = model.embed([text])
    assert vector == [0.0] * 256
    pack_vector(vector, 256)  # finite, so storable; a search gives it no direction
    mixed = model.embed([text, "coffee"])
    assert mixed[0] == vector and norm(mixed[1]) == pytest.approx(1.0, abs=1e-5)


# -- a missing or damaged model fails loudly ---------------------------------------------------


def test_a_missing_model_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match=r"config\.json is missing") as caught:
        StaticEmbedder(tmp_path / "nowhere")
    assert isinstance(caught.value, FeralError)
    assert 'memory.embedder to "none"' in str(caught.value)


@pytest.mark.parametrize("filename", ["embeddings.npy", "tokenizer.json"])
def test_a_missing_file_is_named(tmp_path: Path, filename: str) -> None:
    directory = copy_of_model(tmp_path)
    (directory / filename).unlink()
    with pytest.raises(ModelUnavailable, match=f"{filename} is missing"):
        StaticEmbedder(directory)


@pytest.mark.parametrize("filename", ["embeddings.npy", "tokenizer.json"])
def test_a_changed_byte_is_caught_by_the_checksum(tmp_path: Path, filename: str) -> None:
    directory = copy_of_model(tmp_path)
    path = directory / filename
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(ModelUnavailable, match=f"{filename} is damaged"):
        StaticEmbedder(directory)


def test_a_truncated_matrix_is_refused_even_when_the_checksum_vouches_for_it(
    tmp_path: Path,
) -> None:
    directory = copy_of_model(tmp_path)
    path = directory / "embeddings.npy"
    path.write_bytes(path.read_bytes()[: 1 << 16])
    refresh_digest(directory, "embeddings.npy")
    with pytest.raises(ModelUnavailable, match="embeddings.npy is not a numpy matrix"):
        StaticEmbedder(directory)


def test_a_matrix_of_the_wrong_shape_is_refused(tmp_path: Path) -> None:
    directory = copy_of_model(tmp_path)
    np.save(directory / "embeddings.npy", np.zeros((10, 256), dtype=np.float16))
    refresh_digest(directory, "embeddings.npy")
    with pytest.raises(ModelUnavailable, match="10x256 matrix"):
        StaticEmbedder(directory)


def test_a_pickled_matrix_is_never_loaded(tmp_path: Path) -> None:
    directory = copy_of_model(tmp_path)
    np.save(directory / "embeddings.npy", np.array([{"evil": 1}], dtype=object))
    refresh_digest(directory, "embeddings.npy")
    with pytest.raises(ModelUnavailable, match="not a numpy matrix"):
        StaticEmbedder(directory)


def test_a_tokenizer_that_does_not_parse_is_refused(tmp_path: Path) -> None:
    directory = copy_of_model(tmp_path)
    (directory / "tokenizer.json").write_text('{"not": "a tokenizer"}', encoding="utf-8")
    refresh_digest(directory, "tokenizer.json")
    with pytest.raises(ModelUnavailable, match="tokenizer.json is not a tokenizer"):
        StaticEmbedder(directory)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{", "is not valid JSON"),
        ("[]", "is not a JSON object"),
        ("{}", "is not in the format"),
        ('{"format": "feral-static-embedding/1"}', "lacks the key"),
    ],
)
def test_a_broken_config_is_refused(tmp_path: Path, content: str, problem: str) -> None:
    directory = copy_of_model(tmp_path)
    (directory / "config.json").write_text(content, encoding="utf-8")
    with pytest.raises(ModelUnavailable, match=problem):
        StaticEmbedder(directory)


@pytest.mark.parametrize(
    ("changes", "problem"),
    [({"name": None, "dim": "many"}, "malformed value"), ({"sha256": [1]}, "malformed value")],
)
def test_a_config_with_malformed_values_is_refused(
    tmp_path: Path, changes: dict[str, object], problem: str
) -> None:
    directory = copy_of_model(tmp_path)
    rewrite_config(directory, **changes)
    with pytest.raises(ModelUnavailable, match=problem):
        StaticEmbedder(directory)


def test_a_config_of_another_format_is_refused(tmp_path: Path) -> None:
    directory = copy_of_model(tmp_path)
    rewrite_config(directory, format="model2vec")
    with pytest.raises(ModelUnavailable, match="not in the format"):
        StaticEmbedder(directory)


def test_a_config_with_the_wrong_dimension_is_refused(tmp_path: Path) -> None:
    directory = copy_of_model(tmp_path)
    rewrite_config(directory, dim=384)
    with pytest.raises(ModelUnavailable, match="need 29525x384"):
        StaticEmbedder(directory)
