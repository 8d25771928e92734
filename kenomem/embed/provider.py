"""What turns text into vectors, chosen by `[embeddings] provider`.

A provider embeds documents (what is stored) and queries (what is asked): models such as
e5 and nomic are trained with a prefix for each, which the settings give. Every vector
comes back as float32 of unit length, so a dot product is the cosine.

A provider that cannot answer (its package or model missing, its server down, slow past
the timeout, or answering garbage) raises `EmbeddingsUnavailable`: the caller warns once
and recalls by keywords alone. Nothing here retries or waits longer than the timeout.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from kenomem.config import EmbeddingsSettings
from kenomem.errors import KenomemError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

PROVIDERS = ("none", "fastembed", "openai")


class EmbeddingsUnavailable(KenomemError):
    """The provider could not give vectors now (recall falls back to keywords)."""

    exit_code = 1


class Embedder(Protocol):
    # Names the model and everything that changes its vectors (prefixes, server): a
    # different fingerprint means every vector is made again.
    fingerprint: str

    def documents(self, texts: Sequence[str]) -> Vectors: ...

    def query(self, text: str) -> Vectors: ...


def fingerprint_of(settings: EmbeddingsSettings, model: str, *extra: str) -> str:
    parts = [
        settings.provider,
        model,
        settings.query_prefix,
        settings.document_prefix,
        str(settings.input_type),
        *extra,
    ]
    return hashlib.blake2b(json.dumps(parts).encode(), digest_size=8).hexdigest()


def unit_rows(rows: Vectors) -> Vectors:
    """Each row scaled to length 1 (a zero row stays zero)."""
    import numpy as np

    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (rows / norms).astype(np.float32, copy=False)


def numpy_or_explain() -> None:
    try:
        import numpy  # noqa: F401
    except ImportError as exc:
        raise EmbeddingsUnavailable(
            "recall by meaning needs numpy: pip install 'kenomem[semantic]'"
        ) from exc
