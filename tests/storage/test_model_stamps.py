"""Model files hashed once per version of each file (storage/encoders/model_stamps.py), and an
altered file caught all the same: a file changed in place, with its size and modification time put
back as they were, is hashed again and refused."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from feral.storage.db.errors import ModelUnavailable
from feral.storage.encoders.embedders import MODELS_DIR, STATIC_EMBEDDER
from feral.storage.encoders.model_files import check_digest
from feral.storage.encoders.model_stamps import STAMPS_FILE, DigestStamps
from feral.storage.encoders.static_model import MATRIX_FILE, StaticEmbedder

SHIPPED = MODELS_DIR / STATIC_EMBEDDER


def _copy_of_model(tmp_path: Path) -> Path:
    directory = tmp_path / "model"
    shutil.copytree(SHIPPED, directory)
    return directory


def _alter_in_place(path: Path) -> None:
    """Flip one byte near the end, keeping the size and the modification time."""
    before = path.stat()
    with path.open("r+b") as file:
        file.seek(before.st_size - 1)
        last = file.read(1)
        file.seek(before.st_size - 1)
        file.write(bytes([last[0] ^ 0xFF]))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert path.stat().st_mtime_ns == before.st_mtime_ns


def test_a_verified_file_is_recorded_and_vouched_for_while_unchanged(tmp_path: Path) -> None:
    directory = _copy_of_model(tmp_path)
    record = tmp_path / STAMPS_FILE
    StaticEmbedder(directory, DigestStamps(record))
    stamped = json.loads(record.read_text(encoding="utf-8"))
    assert {Path(name).name for name in stamped} == {"tokenizer.json", MATRIX_FILE}
    digests = json.loads((directory / "config.json").read_text(encoding="utf-8"))["sha256"]
    stamps = DigestStamps(record)
    assert stamps.vouches(directory / MATRIX_FILE, digests[MATRIX_FILE])
    assert not stamps.vouches(directory / MATRIX_FILE, "another digest")
    StaticEmbedder(directory, DigestStamps(record))  # loads again from the record


def test_a_file_altered_after_it_was_verified_is_still_refused(tmp_path: Path) -> None:
    directory = _copy_of_model(tmp_path)
    record = tmp_path / STAMPS_FILE
    StaticEmbedder(directory, DigestStamps(record))
    _alter_in_place(directory / MATRIX_FILE)
    with pytest.raises(ModelUnavailable, match="is damaged"):
        StaticEmbedder(directory, DigestStamps(record))


def test_a_file_replaced_by_another_is_hashed_again(tmp_path: Path) -> None:
    directory = _copy_of_model(tmp_path)
    record = tmp_path / STAMPS_FILE
    path = directory / "tokenizer.json"
    digest = json.loads((directory / "config.json").read_text(encoding="utf-8"))["sha256"]
    check_digest(path, digest["tokenizer.json"], stamps=DigestStamps(record))
    spare = tmp_path / "spare.json"
    spare.write_bytes(path.read_bytes()[:-1] + b" ")
    os.replace(spare, path)
    with pytest.raises(ModelUnavailable, match="is damaged"):
        check_digest(path, digest["tokenizer.json"], stamps=DigestStamps(record))


def test_a_damaged_record_only_means_hashing_again(tmp_path: Path) -> None:
    directory = _copy_of_model(tmp_path)
    record = tmp_path / STAMPS_FILE
    record.write_text("{not json", encoding="utf-8")
    StaticEmbedder(directory, DigestStamps(record))
    assert len(json.loads(record.read_text(encoding="utf-8"))) == 2
