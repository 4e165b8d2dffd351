"""Answer vectors: checked, unit length, and stored compactly.

A vector is stored as int8 components with one float32 scale, base64 encoded (``d + 4`` bytes;
about 2 kB for 1 536 dimensions, a quarter of float32 JSON's size). Vectors are unit length before
encoding, so the rounding error of a component is at most ``scale / 254`` and cosine similarities
survive to about three decimals, far below any shift the meaning comparison acts on.
"""

from __future__ import annotations

import base64
import functools
import math
import operator
import struct
from array import array
from collections.abc import Sequence

CHECK_TEXT = "PromptCanary embedding check: the quick brown fox jumps over the lazy dog."
"""The fixed text embedded with every run's answers: when the model returns another vector for it
than the baseline stored, old and new vectors are not compared."""
CHECK_MIN_COSINE = 0.99
"""Below this cosine between today's and the baseline's vector of :data:`CHECK_TEXT`, the
embedding model changed (int8 storage alone keeps it above 0.999)."""

Vector = tuple[float, ...]


class VectorError(ValueError):
    """A vector that cannot be used: empty, not numbers, not finite, or all zeros."""


def checked(values: Sequence[object]) -> Vector:
    """``values`` as a unit-length vector; :class:`VectorError` says what is wrong with it."""
    if not isinstance(values, Sequence) or isinstance(values, str | bytes) or not values:
        raise VectorError("the embedding is empty")
    if isinstance(values[0], Sequence) and not isinstance(values[0], str | bytes):
        raise VectorError(
            "the embedding is a list of vectors, one per token (the server pools none): use an "
            "embedding model, or a server that returns one pooled vector per text"
        )
    try:
        floats = [float(v) for v in values]  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise VectorError("the embedding holds values that are not numbers") from None
    if not all(math.isfinite(v) for v in floats):
        raise VectorError("the embedding holds NaN or infinite values")
    norm = math.sqrt(math.fsum(v * v for v in floats))
    if norm == 0.0:
        raise VectorError("the embedding is all zeros")
    return tuple(v / norm for v in floats)


def encode(vector: Sequence[float]) -> str:
    """int8 components with a float32 scale, base64 (see module doc)."""
    scale = max((abs(v) for v in vector), default=0.0) or 1.0
    quantised = array("b", (max(-127, min(127, round(v / scale * 127.0))) for v in vector))
    return base64.b64encode(struct.pack("<f", scale) + quantised.tobytes()).decode("ascii")


@functools.lru_cache(maxsize=1 << 16)
def decode(text: str) -> Vector:
    """The unit vector :func:`encode` stored; :class:`VectorError` for a corrupt value.

    Cached: a pool's vectors are read by every run and every replay of one (a tuple is
    immutable, so sharing it is safe)."""
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise VectorError("a stored vector is not base64") from None
    if len(raw) < 5:
        raise VectorError("a stored vector is empty")
    (scale,) = struct.unpack("<f", raw[:4])
    quantised = array("b")
    quantised.frombytes(raw[4:])
    if not math.isfinite(scale):
        raise VectorError("a stored vector's scale is not finite")
    norm = math.sqrt(sum(map(operator.mul, quantised, quantised)))
    if norm == 0.0:
        raise VectorError("a stored vector is all zeros")
    return tuple(v / norm for v in quantised)


def dimension(text: str) -> int:
    """The dimension of an encoded vector (its int8 components)."""
    return max(0, len(base64.b64decode(text.encode("ascii"))) - 4)


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    """The inner product (the cosine similarity of two unit vectors)."""
    return math.fsum(x * y for x, y in zip(a, b, strict=True))
