"""Reading a shipped model's files so that a damaged install fails loudly, never quietly.

Both shipped embedders (storage/encoders/static_model.py, storage/encoders/onnx_model.py) keep a
``config.json`` with the SHA-256 of every other file and a Hugging Face ``tokenizer.json``. Each
check here turns a missing, unreadable or altered file into one :class:`ModelUnavailable` line that
names the file and the way out, so no command ever runs on with a model it did not mean to use.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import msgspec

from feral.storage.db.errors import ModelUnavailable

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from .model_stamps import DigestStamps

__all__ = [
    "CONFIG_FILE",
    "TOKENIZER_FILE",
    "ModelDigests",
    "check_digest",
    "read_config",
    "read_tokenizer",
]

CONFIG_FILE = "config.json"
TOKENIZER_FILE = "tokenizer.json"
WAY_OUT = 'reinstall feral, or set memory.embedder to "none" in settings.json'


class ModelDigests(msgspec.Struct):
    """What every shipped model's ``config.json`` holds: the SHA-256 of each other file, by
    name. Each model reads the rest of its config as a subclass of this."""

    sha256: dict[str, str] = msgspec.field(default_factory=dict)


Config = TypeVar("Config", bound=ModelDigests)


def unavailable(path: Path, problem: str, way_out: str = WAY_OUT) -> ModelUnavailable:
    """The one line a broken model gives: what is wrong with which file, and what to do."""
    return ModelUnavailable(f"the embedding model is unusable: {path} {problem}; {way_out}")


def _json_object(path: Path, way_out: str) -> dict[str, object]:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise unavailable(path, "is missing", way_out) from exc
    except OSError as exc:
        raise unavailable(path, f"cannot be read ({exc.strerror or exc})", way_out) from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise unavailable(path, "is not valid JSON", way_out) from exc
    if not isinstance(config, dict):
        raise unavailable(path, "is not a JSON object", way_out)
    return config


def read_config(
    directory: Path, shape: type[Config], way_out: str = WAY_OUT, *, model_format: str = ""
) -> Config:
    """``directory/config.json`` read as ``shape``: the keys a model needs, typed.

    A config of another ``model_format`` (when one is named), a key ``shape`` requires missing,
    or a value of the wrong type is the file's fault, refused before any other file is read;
    keys ``shape`` does not name (where the model came from) are left unread.
    """
    path = directory / CONFIG_FILE
    config = _json_object(path, way_out)
    if model_format and config.get("format") != model_format:
        raise unavailable(path, f"is not in the format {model_format}", way_out)
    for field in msgspec.structs.fields(shape):
        if field.required and field.encode_name not in config:
            raise unavailable(path, f"lacks the key {field.encode_name!r}", way_out)
    try:
        return msgspec.convert(config, shape)
    except msgspec.ValidationError as exc:
        raise unavailable(path, f"holds a malformed value ({exc})", way_out) from exc


def check_digest(
    path: Path, expected: object, way_out: str = WAY_OUT, stamps: DigestStamps | None = None
) -> None:
    """Refuse ``path`` unless its SHA-256 is ``expected`` (config.json's record of it).

    With ``stamps`` (storage/encoders/model_stamps.py), a file found right before and unchanged
    since is not hashed again, and a file found right now is recorded.
    """
    if stamps is not None and stamps.vouches(path, expected):
        return
    digest = hashlib.sha256()
    try:
        with path.open("rb") as file:
            while chunk := file.read(1 << 20):
                digest.update(chunk)
    except FileNotFoundError as exc:
        raise unavailable(path, "is missing", way_out) from exc
    except OSError as exc:
        raise unavailable(path, f"cannot be read ({exc.strerror or exc})", way_out) from exc
    if digest.hexdigest() != expected:
        raise unavailable(path, "is damaged (its SHA-256 differs from config.json's)", way_out)
    if stamps is not None:
        stamps.remember(path, digest.hexdigest())


def read_tokenizer(path: Path, max_tokens: int, way_out: str = WAY_OUT) -> Tokenizer:
    """The tokenizer, unpadded and cut at ``max_tokens`` (special tokens included)."""
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises plain Exception for a bad file
        raise unavailable(path, f"is not a tokenizer ({exc})", way_out) from exc
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_tokens)
    return tokenizer
