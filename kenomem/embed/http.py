"""The `openai` provider: any server that speaks OpenAI's `POST /v1/embeddings` (Ollama,
LM Studio, llama.cpp's server, vLLM, text-embeddings-inference, OpenAI itself).

Only the standard library's HTTP client: one request per batch, a timeout on each, the
answer checked before any vector is kept (its count, its indexes, one dimension for all,
finite numbers, a bounded size).
"""

from __future__ import annotations

import base64
import json
import math
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kenomem.config import EmbeddingsSettings
from kenomem.embed.provider import EmbeddingsUnavailable, fingerprint_of, unit_rows
from kenomem.errors import ConfigError

if TYPE_CHECKING:
    from kenomem.embed.provider import Vectors

DEFAULT_BASE_URL = "http://127.0.0.1:11434/v1"  # Ollama's
MAX_ANSWER = 256 * 1024 * 1024  # bytes of one answer read at the most


# `timeout_seconds` is the time for a query, or a batch of up to this many texts; a
# larger batch (those of `reindex`) gets as much more in proportion.
TEXTS_PER_TIMEOUT = 4


def request_timeout(seconds: float, texts: int) -> float:
    """How long one request of `texts` texts may take."""
    return seconds * max(1.0, texts / TEXTS_PER_TIMEOUT)


class OpenAIEmbedder:
    # A server answers while this process does other work: `Meaning.ask_ahead`.
    remote = True

    def __init__(self, settings: EmbeddingsSettings) -> None:
        if not settings.model:
            raise ConfigError(
                "embeddings.model must name the server's model for the openai provider",
                hint='e.g. model = "nomic-embed-text" for Ollama',
            )
        self.settings = settings
        self.url = (settings.base_url or DEFAULT_BASE_URL).rstrip("/") + "/embeddings"
        if not self.url.startswith(("http://", "https://")):
            raise ConfigError(f"embeddings.base_url must be an http(s) URL, not {self.url!r}")
        self.fingerprint = fingerprint_of(settings, settings.model, self.url)
        self.dimension = 0

    def documents(self, texts: Sequence[str]) -> Vectors:
        prefix = self.settings.document_prefix
        return self._embed([prefix + t for t in texts], "passage")

    def query(self, text: str) -> Vectors:
        return self._embed([self.settings.query_prefix + text], "query")[0]

    def _embed(self, texts: list[str], kind: str) -> Vectors:
        import numpy as np

        size = max(1, self.settings.batch_size)
        parts = [self._batch(texts[i : i + size], kind) for i in range(0, len(texts), size)]
        rows = np.concatenate(parts) if parts else np.zeros((0, self.dimension), np.float32)
        return unit_rows(rows)

    def _batch(self, texts: list[str], kind: str) -> Vectors:
        body: dict[str, Any] = {
            "model": self.settings.model,
            "input": texts,
            "encoding_format": "float",
        }
        if self.settings.input_type:
            body["input_type"] = kind
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key_name = self.settings.api_key_env
        if key_name:
            key = os.environ.get(key_name, "")
            if not key:
                raise EmbeddingsUnavailable(
                    f"the embeddings server's key is not set: the variable {key_name} is empty"
                )
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(
            self.url, data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        where = self.url
        timeout = request_timeout(self.settings.timeout_seconds, len(texts))
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                raw = answer.read(MAX_ANSWER + 1)
        except urllib.error.HTTPError as exc:
            raise EmbeddingsUnavailable(
                f"the embeddings server at {where} answered HTTP {exc.code} ({exc.reason})"
            ) from None
        except (TimeoutError, urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError) or isinstance(exc, TimeoutError):
                reason = f"no answer within {timeout:g} s"
            raise EmbeddingsUnavailable(
                f"the embeddings server at {where} cannot be reached: {reason}"
            ) from None
        if len(raw) > MAX_ANSWER:
            raise EmbeddingsUnavailable(f"the embeddings server at {where} answered too much")
        return self._read(raw, len(texts))

    def _read(self, raw: bytes, count: int) -> Vectors:
        import numpy as np

        bad = f"the embeddings server at {self.url} gave an answer that is not embeddings"
        try:
            doc = json.loads(raw)
            data = doc["data"]
            if not isinstance(data, list) or len(data) != count:
                raise ValueError("count")
            rows: list[Any] = [None] * count
            for n, item in enumerate(data):
                index = item.get("index", n)
                if not isinstance(index, int) or not 0 <= index < count or rows[index] is not None:
                    raise ValueError("index")
                rows[index] = _vector(item["embedding"])
        except (ValueError, KeyError, TypeError, AttributeError):
            raise EmbeddingsUnavailable(bad) from None
        dims = {len(row) for row in rows}
        if len(dims) != 1 or 0 in dims:
            raise EmbeddingsUnavailable(f"{bad} (vectors of different lengths)")
        (dim,) = dims
        if self.dimension and dim != self.dimension:
            raise EmbeddingsUnavailable(
                f"the embeddings server at {self.url} changed its vectors' length "
                f"from {self.dimension} to {dim}"
            )
        vectors = np.asarray(rows, dtype=np.float32)
        if not np.isfinite(vectors).all():
            raise EmbeddingsUnavailable(f"{bad} (numbers that are not finite)")
        self.dimension = dim
        return vectors


def _vector(value: Any) -> list[float]:
    if isinstance(value, str):  # encoding_format "base64", which some servers always use
        import numpy as np

        return np.frombuffer(base64.b64decode(value, validate=True), dtype="<f4").tolist()
    if not isinstance(value, list):
        raise TypeError("embedding")
    out = []
    for x in value:
        if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
            raise ValueError("number")
        out.append(float(x))
    return out
