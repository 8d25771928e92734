"""The `fastembed` provider: an ONNX model run in this process (`kenomem[semantic]`).

The model is loaded on first use and only from the local cache (or `model_path`): a
recall or a remember never goes to the network. `kenomem model pull` (or `reindex`)
fetches it once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenomem.config import EmbeddingsSettings
from kenomem.embed.provider import EmbeddingsUnavailable, fingerprint_of, unit_rows

if TYPE_CHECKING:
    from kenomem.embed.provider import Vectors

# fastembed's own default: English, 384 dimensions, about 67 MB.
DEFAULT_MODEL = "BAAI/bge-small-en-v1.5"
# The prefixes a model was trained with, when the settings give none: (query, document).
PREFIXES = {
    "BAAI/bge-small-en-v1.5": ("Represent this sentence for searching relevant passages: ", ""),
    "intfloat/multilingual-e5-small": ("query: ", "passage: "),
    "intfloat/multilingual-e5-large": ("query: ", "passage: "),
    "nomic-ai/nomic-embed-text-v1.5": ("search_query: ", "search_document: "),
}


def model_cache(settings: EmbeddingsSettings) -> Path:
    """Where models are kept: `cache_dir`, else the user's cache (XDG_CACHE_HOME)."""
    if settings.cache_dir:
        return Path(settings.cache_dir).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kenomem" / "models"


class FastEmbedder:
    def __init__(self, settings: EmbeddingsSettings) -> None:
        self.settings = settings
        self.model_name = settings.model or DEFAULT_MODEL
        query, document = settings.query_prefix, settings.document_prefix
        if not query and not document:
            query, document = PREFIXES.get(self.model_name, ("", ""))
        self.query_prefix, self.document_prefix = query, document
        self.fingerprint = fingerprint_of(
            settings, self.model_name, query, document, settings.model_path
        )
        self._model: Any = None

    def load(self, download: bool = False) -> Any:
        """The model, loaded once; fetched first when `download` (else only from disk)."""
        if self._model is not None:
            return self._model
        try:
            from fastembed import TextEmbedding
        except ImportError:
            raise EmbeddingsUnavailable(
                "the fastembed provider needs its package: pip install 'kenomem[semantic]'"
            ) from None
        options: dict[str, Any] = {"cache_dir": str(model_cache(self.settings))}
        if self.settings.model_path:
            options["specific_model_path"] = str(Path(self.settings.model_path).expanduser())
        elif not download:
            options["local_files_only"] = True
        try:
            self._model = TextEmbedding(self.model_name, **options)
        except Exception as exc:  # fastembed raises many kinds; each means "no model here"
            hint = "" if download else "; `kenomem model pull` fetches it"
            raise EmbeddingsUnavailable(
                f"the model {self.model_name} cannot be loaded ({_first_line(exc)}){hint}"
            ) from None
        return self._model

    def documents(self, texts: Sequence[str]) -> Vectors:
        return self._embed([self.document_prefix + t for t in texts])

    def query(self, text: str) -> Vectors:
        return self._embed([self.query_prefix + text])[0]

    def _embed(self, texts: list[str]) -> Vectors:
        import numpy as np

        model = self.load()
        try:
            rows = list(model.embed(texts, batch_size=max(1, self.settings.batch_size)))
        except Exception as exc:
            raise EmbeddingsUnavailable(f"the model failed: {_first_line(exc)}") from None
        if not rows:
            return np.zeros((0, 0), np.float32)
        return unit_rows(np.asarray(rows, dtype=np.float32))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
