"""The `fastembed` provider: an ONNX model run in this process (`kenomem[semantic]`).

The model is loaded on first use, through fastembed's own loading code, and only from
disk: the cache (`[embeddings] cache_dir`, else ~/.cache/kenomem/models) or a folder of
its own (`model_path`). A recall, a remember or a reindex never goes to the network:
`kenomem model pull` is the one command that fetches a model, so what a machine
downloads is always asked for by name (a `kenomem.toml` from someone else may name a
model of gigabytes). Whatever goes wrong (the package, the model, its files) is one
`EmbeddingsUnavailable` naming what is missing and the command that fixes it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from kenomem.config import EmbeddingsSettings
from kenomem.embed.provider import EmbeddingsUnavailable, fingerprint_of, unit_rows

if TYPE_CHECKING:
    from kenomem.embed.provider import Vectors

# fastembed's own default, kept: English, 384 dimensions, a 67 MB quantized download (the
# smallest transformer fastembed lists), MIT, and on MTEB's retrieval tasks 51.7 to
# bge-base's 53.3, at a third of its size. A vault in other languages:
# "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2" (220 MB), or
# "intfloat/multilingual-e5-large" (2.2 GB).
DEFAULT_MODEL = "BAAI/bge-small-en-v1.5"
PULL = "kenomem model pull"
INSTALL = "pip install 'kenomem[semantic]'"

# The prefixes each model's card says it was trained with, when the settings give none:
# (query, document).
_BGE = ("Represent this sentence for searching relevant passages: ", "")
_E5 = ("query: ", "passage: ")
_NOMIC = ("search_query: ", "search_document: ")
PREFIXES = {
    "BAAI/bge-small-en-v1.5": _BGE,
    "BAAI/bge-base-en-v1.5": _BGE,
    "BAAI/bge-large-en-v1.5": _BGE,
    "BAAI/bge-small-en": _BGE,
    "BAAI/bge-base-en": _BGE,
    "BAAI/bge-small-zh-v1.5": ("为这个句子生成表示以用于检索相关文章：", ""),
    "mixedbread-ai/mxbai-embed-large-v1": _BGE,
    "snowflake/snowflake-arctic-embed-xs": _BGE,
    "snowflake/snowflake-arctic-embed-s": _BGE,
    "snowflake/snowflake-arctic-embed-m": _BGE,
    "snowflake/snowflake-arctic-embed-m-long": _BGE,
    "snowflake/snowflake-arctic-embed-l": _BGE,
    "intfloat/multilingual-e5-small": _E5,
    "intfloat/multilingual-e5-large": _E5,
    "nomic-ai/nomic-embed-text-v1": _NOMIC,
    "nomic-ai/nomic-embed-text-v1.5": _NOMIC,
    "nomic-ai/nomic-embed-text-v1.5-Q": _NOMIC,
    "google/embeddinggemma-300m": ("task: search result | query: ", "title: none | text: "),
}

# onnxruntime's threads. Left to itself it starts one per core of the host, which in a
# container means the host's cores, not the container's share: on a 2-core machine (or a
# 2-CPU quota) that is more threads than cores, and all of them spin. So: the cores this
# process may use, at most 4 (a small model on short texts gains nothing past that).
MAX_THREADS = 4

# Where a folder of one's own (`model_path`) may hold its ONNX file, in this order.
MODEL_FILES = (
    "model.onnx",
    "onnx/model.onnx",
    "model_optimized.onnx",
    "model_quantized.onnx",
    "onnx/model_quantized.onnx",
)
_POOLING = {
    "pooling_mode_cls_token": "CLS",
    "pooling_mode_mean_tokens": "MEAN",
    "pooling_mode_lasttoken": "LAST_TOKEN",
}


def model_cache(settings: EmbeddingsSettings) -> Path:
    """Where models are kept: `cache_dir`, else the user's cache (XDG_CACHE_HOME)."""
    if settings.cache_dir:
        return Path(settings.cache_dir).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kenomem" / "models"


def model_folder(settings: EmbeddingsSettings) -> Path | None:
    """`model_path`, when the settings give one."""
    return Path(settings.model_path).expanduser() if settings.model_path else None


def prefixes(settings: EmbeddingsSettings, model: str) -> tuple[str, str]:
    """(query, document) prefixes: the settings' when they give either, else the model's."""
    if settings.query_prefix or settings.document_prefix:
        return settings.query_prefix, settings.document_prefix
    return PREFIXES.get(model, ("", ""))


def usable_cpus() -> int:
    """The cores this process may run on: its affinity, bounded by a cgroup's CPU quota."""
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        count = os.cpu_count() or 1
    quota = _cgroup_quota()
    if quota is not None:
        count = min(count, max(1, math.floor(quota)))
    return max(1, count)


def _cgroup_quota() -> float | None:
    """CPUs a cgroup lets this process use (v2's cpu.max, v1's cfs quota); None: no limit."""
    try:
        limit, _, span = Path("/sys/fs/cgroup/cpu.max").read_text().partition(" ")
        return None if limit.strip() == "max" else int(limit) / int(span)
    except (OSError, ValueError, ZeroDivisionError):
        pass
    try:
        quota = int(Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").read_text())
        period = int(Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None


def threads() -> int:
    return min(MAX_THREADS, usable_cpus())


# -- fastembed, imported and kept quiet -------------------------------------------------


def installed() -> bool:
    """Whether the fastembed package is there (told without importing it, which takes a
    second)."""
    import importlib.util

    try:
        return importlib.util.find_spec("fastembed") is not None
    except (ImportError, ValueError):  # ValueError: a module set to None, or without spec
        return False


def fastembed() -> Any:
    """fastembed's `TextEmbedding`; `EmbeddingsUnavailable` when it cannot be imported."""
    missing = f"the fastembed provider needs the fastembed package: {INSTALL}"
    if not installed():
        raise EmbeddingsUnavailable(missing)
    try:
        with quiet():
            from fastembed import TextEmbedding
    except ImportError:
        raise EmbeddingsUnavailable(missing) from None
    except Exception as exc:  # a broken install: onnxruntime's library, numpy's version...
        raise EmbeddingsUnavailable(
            f"the fastembed package cannot be imported ({_first_line(exc)}): "
            f"reinstall it with {INSTALL}"
        ) from None
    return TextEmbedding


_quieted = [0]  # how many `quiet` blocks are open


@contextmanager
def quiet() -> Iterator[None]:
    """fastembed's own messages silenced: it logs through loguru to stderr (a missing
    model is an ERROR line per place it looked) and warns of what kenomem reports itself.
    Its logging is on again after the outermost block."""
    logger: Any = None
    try:
        from loguru import logger
    except ImportError:
        pass
    if logger is not None:
        logger.disable("fastembed")
    _quieted[0] += 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        _quieted[0] -= 1
        if logger is not None and not _quieted[0]:
            logger.enable("fastembed")


# -- which model, and where --------------------------------------------------------------


class Resolved(NamedTuple):
    name: str  # as fastembed knows it (a folder of one's own: the name it was registered by)
    description: Any  # fastembed's DenseModelDescription
    folder: Path | None  # model_path; None: the cache


def resolve(text_embedding: Any, settings: EmbeddingsSettings) -> Resolved:
    """The model the settings name, as fastembed knows it. A folder (`model_path`) that
    holds a model fastembed does not list, or another file of one it lists, is registered
    with fastembed as a model of its own (mean pooling unless the folder's
    `1_Pooling/config.json` says otherwise)."""
    name = settings.model or DEFAULT_MODEL
    known = _described(text_embedding, name)
    folder = model_folder(settings)
    if folder is None:
        if known is None:
            raise EmbeddingsUnavailable(
                f"fastembed has no model named {name!r}: set [embeddings] model to one of "
                "TextEmbedding.list_supported_models(), or model_path to a folder holding it"
            )
        return Resolved(known.model, known, None)
    if not folder.is_dir():
        raise EmbeddingsUnavailable(
            f"the model folder {folder} ([embeddings] model_path) does not exist"
        )
    if known is not None and (folder / known.model_file).is_file():
        return Resolved(known.model, known, folder)
    return _registered(text_embedding, folder)


def _described(text_embedding: Any, name: str) -> Any:
    for description in text_embedding._list_supported_models():
        if description.model.lower() == name.lower():
            return description
    return None


def _registered(text_embedding: Any, folder: Path) -> Resolved:
    model_file = next((f for f in MODEL_FILES if (folder / f).is_file()), None)
    if model_file is None:
        raise EmbeddingsUnavailable(
            f"the model folder {folder} ([embeddings] model_path) holds no ONNX model "
            f"(looked for {', '.join(MODEL_FILES)})"
        )
    data = sorted(
        str(p.relative_to(folder))
        for p in (folder / model_file).parent.iterdir()
        if p.name.startswith(Path(model_file).name) and p.name != Path(model_file).name
    )  # external data: model.onnx_data, model.onnx.data
    pooling = _pooling(folder)
    dim = _read_json(folder / "config.json").get("hidden_size")
    identity = json.dumps([str(folder.resolve()), model_file, pooling, data])
    key = "kenomem-local/" + hashlib.blake2b(identity.encode(), digest_size=8).hexdigest()
    known = _described(text_embedding, key)
    if known is None:
        from fastembed.common.model_description import ModelSource, PoolingType

        text_embedding.add_custom_model(
            key,
            pooling=PoolingType(pooling),
            normalization=True,
            sources=ModelSource(hf=key),
            dim=dim if isinstance(dim, int) and dim > 0 else 0,
            model_file=model_file,
            description=f"the model in {folder}",
            additional_files=data,
        )
        known = _described(text_embedding, key)
    return Resolved(key, known, folder)


def _pooling(folder: Path) -> str:
    config = _read_json(folder / "1_Pooling" / "config.json")
    for key, pooling in _POOLING.items():
        if config.get(key) is True:
            return pooling
    return "MEAN"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def cached_folder(text_embedding: Any, resolved: Resolved, cache: Path) -> Path | None:
    """Where the cache holds the model (fastembed's own lookup, offline); None if not."""
    if resolved.folder is not None:
        return resolved.folder
    if not _has_entries(cache):
        return None
    try:
        found = text_embedding.download_model(
            resolved.description, str(cache), local_files_only=True
        )
    except Exception:
        return None
    folder = Path(found)
    return folder if (folder / resolved.description.model_file).is_file() else None


def _has_entries(folder: Path) -> bool:
    try:
        return any(os.scandir(folder))
    except OSError:
        return False


def folder_bytes(folder: Path) -> int:
    """The size of the files in `folder` (a cache's links followed to their blobs)."""
    total = 0
    for path in folder.rglob("*"):
        try:
            if path.is_file():
                total += path.stat().st_size
        except OSError:
            continue
    return total


# -- the provider ------------------------------------------------------------------------


# Models that the watcher's command server loaded before it forks a process for each call
# (`warm`): the forks find them ready. Loaded with one thread: a fork does not inherit
# onnxruntime's pool of threads, and one thread embeds a query in a few milliseconds.
_WARM: dict[str, Any] = {}


def warm(settings: EmbeddingsSettings) -> None:
    """Load the settings' model now, for the processes this one forks (`FastEmbedder.load`
    takes it). A model that cannot be loaded is left to the calls, which say why."""
    embedder = FastEmbedder(settings)
    if embedder.fingerprint not in _WARM:
        try:
            _WARM[embedder.fingerprint] = load_model(settings, 1)
        except EmbeddingsUnavailable:
            pass


class FastEmbedder:
    def __init__(self, settings: EmbeddingsSettings) -> None:
        self.settings = settings
        self.model_name = settings.model or DEFAULT_MODEL
        query, document = prefixes(settings, self.model_name)
        self.query_prefix, self.document_prefix = query, document
        self.fingerprint = fingerprint_of(
            settings, self.model_name, query, document, settings.model_path
        )
        self._model: Any = None

    def load(self) -> Any:
        """The model, loaded once, from disk only."""
        if self._model is None:
            self._model = _WARM.get(self.fingerprint) or load_model(self.settings, threads())
        return self._model

    def documents(self, texts: Sequence[str]) -> Vectors:
        model = self.load()
        prefixed = [self.document_prefix + t for t in texts]
        return self._embed(lambda: model.passage_embed(prefixed, batch_size=self._batch()))

    def query(self, text: str) -> Vectors:
        model = self.load()
        return self._embed(lambda: model.query_embed(self.query_prefix + text))[0]

    def _batch(self) -> int:
        return max(1, self.settings.batch_size)

    def _embed(self, run: Callable[[], Iterable[Any]]) -> Vectors:
        import numpy as np

        try:
            with quiet():
                rows = list(run())
        except Exception as exc:  # onnxruntime's and the tokenizer's errors alike
            raise EmbeddingsUnavailable(
                f"the model {self.model_name} failed: {_first_line(exc)}"
            ) from None
        if not rows:
            return np.zeros((0, 0), np.float32)
        return unit_rows(np.asarray(rows, dtype=np.float32))


def load_model(settings: EmbeddingsSettings, thread_count: int) -> Any:
    """The settings' model, loaded by fastembed from disk (never fetched)."""
    name = settings.model or DEFAULT_MODEL
    folder = model_folder(settings)
    cache = model_cache(settings)
    if installed() and folder is None and not _has_entries(cache):  # told without fastembed
        raise EmbeddingsUnavailable(f"the model {name} is not in {cache}: `{PULL}` fetches it")
    text_embedding = fastembed()
    with quiet():
        resolved = resolve(text_embedding, settings)
        if folder is None and cached_folder(text_embedding, resolved, cache) is None:
            raise EmbeddingsUnavailable(
                f"the model {name} is not in {cache}: `{PULL}` fetches it "
                f"({_megabytes(resolved.description)})"
            )
        options: dict[str, Any] = {
            "cache_dir": str(cache),
            "threads": thread_count,
            "local_files_only": True,
        }
        if resolved.folder is not None:
            options["specific_model_path"] = str(resolved.folder)
        try:
            return text_embedding(resolved.name, **options)
        except Exception as exc:  # onnxruntime's, the tokenizer's, fastembed's own
            where = folder or cache
            fix = "check the folder's files" if folder is not None else f"`{PULL}` fetches it again"
            raise EmbeddingsUnavailable(
                f"the model {name} in {where} cannot be loaded ({_first_line(exc)}): {fix}"
            ) from None


def _megabytes(description: Any) -> str:
    size = float(getattr(description, "size_in_GB", 0) or 0)
    return f"{size * 1000:,.0f} MB" if size else "its size unknown"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


# -- fetching ----------------------------------------------------------------------------


class Fetched(NamedTuple):
    folder: Path
    fetched: bool  # downloaded now (False: it was there already)
    dimension: int  # of the vectors the loaded model made
    seconds: float


def fetch(
    settings: EmbeddingsSettings,
    progress: bool = True,
    say: Callable[[str], None] | None = None,
) -> Fetched:
    """Download the settings' model into the cache unless it is there and loads, with
    huggingface_hub's progress bar on stderr when `progress` (and `say` told what is
    fetched first); then load it and embed a word, so that what is fetched is known to
    work. A `model_path` is only checked."""
    started = time.perf_counter()
    text_embedding = fastembed()
    cache = model_cache(settings)
    with quiet():
        resolved = resolve(text_embedding, settings)
        folder = cached_folder(text_embedding, resolved, cache)
    broken = ""
    if folder is not None:
        try:
            dimension = _works(settings)
            return Fetched(folder, False, dimension, time.perf_counter() - started)
        except EmbeddingsUnavailable as exc:
            if resolved.folder is not None:
                raise  # a folder of one's own is not fetched: it is what it is
            broken = f"the copy in {folder} does not load ({exc}); "
    # Not there, or there but broken (a download cut short): fetched (again).
    if say is not None:
        where = source_of(resolved.description)
        size = _megabytes(resolved.description)
        say(f"{broken}fetching {resolved.description.model} ({size}) from {where}")
    folder = _download(text_embedding, resolved, cache, progress, again=folder is not None)
    dimension = _works(settings)
    return Fetched(folder, True, dimension, time.perf_counter() - started)


def _works(settings: EmbeddingsSettings) -> int:
    embedder = FastEmbedder(settings)
    return int(embedder.documents(["kenomem"]).shape[1])


def _download(
    text_embedding: Any, resolved: Resolved, cache: Path, progress: bool, again: bool
) -> Path:
    description = resolved.description
    source = description.sources.hf
    cache.mkdir(parents=True, exist_ok=True)
    options: dict[str, Any] = {"force_download": True} if again else {}
    if not progress:
        options["tqdm_class"] = _silent_bars()
    with quiet():
        if progress:
            _bars_on()
        try:
            if source:  # fastembed's own download, called direct for its errors' causes
                found = text_embedding.download_files_from_huggingface(
                    source,
                    cache_dir=str(cache),
                    extra_patterns=[description.model_file, *description.additional_files],
                    **options,
                )
            else:
                found = text_embedding.download_model(description, str(cache), retries=1)
        except Exception as exc:
            where = f"huggingface.co/{source}" if source else description.sources.url
            raise EmbeddingsUnavailable(
                f"the model {description.model} could not be fetched from {where} "
                f"({_first_line(exc)}): check the network (a proxy is taken from "
                "HTTPS_PROXY), or copy the model's folder here and set [embeddings] "
                "model_path to it"
            ) from None
    return Path(found)


def _silent_bars() -> Any:
    from huggingface_hub.utils import tqdm

    class Silent(tqdm):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)

    return Silent


def _bars_on() -> None:
    try:
        from huggingface_hub.utils import enable_progress_bars

        enable_progress_bars()  # fastembed's offline lookup turns them off
    except ImportError:
        pass


def source_of(description: Any) -> str:
    """Where `fetch` gets the model from."""
    hf = getattr(description.sources, "hf", None)
    return f"https://huggingface.co/{hf}" if hf else str(description.sources.url or "")
