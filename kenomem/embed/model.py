"""`kenomem model show|pull`: which model recall by meaning uses, where it is, and
fetching it. Only the fastembed provider keeps a model on this machine; with "openai" a
server holds it, with "none" there is none, and pulling is then nothing to do.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from kenomem.config import EmbeddingsSettings
from kenomem.embed.provider import EmbeddingsUnavailable


class ModelInfo(NamedTuple):
    provider: str  # none, fastembed or openai
    model: str  # "" with provider none
    # fastembed: whether the model is on disk; None: not a model kenomem keeps
    present: bool | None
    path: str  # fastembed: its folder (or the cache it goes into); openai: the server's URL
    source: str  # where `kenomem model pull` fetches it from ("" when it does not)
    size_bytes: int  # on disk when present, else the download's size (0: unknown)
    dimension: int  # of its vectors (0: unknown)
    query_prefix: str
    document_prefix: str
    threads: int  # fastembed: onnxruntime's threads (0 otherwise)
    problem: str  # why recall by meaning cannot use it now ("" when it can)


class PullResult(NamedTuple):
    provider: str
    model: str
    fetched: bool  # downloaded now (False: it was there already, or nothing to fetch)
    path: str  # where it is ("" when nothing is kept here)
    size_bytes: int
    dimension: int  # of the vectors it made when loaded after the pull (0: not loaded)
    seconds: float
    note: str  # why there was nothing to fetch ("" when the model is here)


NOTHING_WITHOUT_PROVIDER = (
    'nothing to fetch: [embeddings] provider is "none" (recall by keywords alone); '
    'set provider = "fastembed" in kenomem.toml to recall by meaning with a local model'
)


def model_info(settings: EmbeddingsSettings) -> ModelInfo:
    """What `kenomem model show` tells: told from the disk, without loading the model."""
    provider = settings.provider
    if provider == "fastembed":
        return _fastembed_info(settings)
    if provider == "openai":
        from kenomem.embed.http import DEFAULT_BASE_URL

        return ModelInfo(
            provider,
            settings.model,
            None,
            settings.base_url or DEFAULT_BASE_URL,
            "",
            0,
            0,
            settings.query_prefix,
            settings.document_prefix,
            0,
            "" if settings.model else "[embeddings] model must name the server's model",
        )
    return ModelInfo(provider, "", None, "", "", 0, 0, "", "", 0, "")


def _fastembed_info(settings: EmbeddingsSettings) -> ModelInfo:
    from kenomem.embed import local

    name = settings.model or local.DEFAULT_MODEL
    query, document = local.prefixes(settings, name)
    folder = local.model_folder(settings)
    cache = local.model_cache(settings)
    info = ModelInfo(
        "fastembed",
        name,
        False,
        str(folder or cache),
        "",
        0,
        0,
        query,
        document,
        local.threads(),
        "",
    )
    try:
        text_embedding = local.fastembed()
        with local.quiet():
            resolved = local.resolve(text_embedding, settings)
            found = local.cached_folder(text_embedding, resolved, cache)
    except EmbeddingsUnavailable as exc:
        return info._replace(problem=str(exc))
    description = resolved.description
    info = info._replace(
        dimension=int(description.dim or 0),
        source="" if folder is not None else local.source_of(description),
        size_bytes=int(float(description.size_in_GB or 0) * 1e9),
    )
    if found is None:
        return info._replace(
            problem=f"the model is not in {cache}: `{local.PULL}` fetches it",
        )
    return info._replace(present=True, path=str(found), size_bytes=local.folder_bytes(found))


def pull_model(
    settings: EmbeddingsSettings,
    progress: bool = True,
    say: Callable[[str], None] | None = None,
) -> PullResult:
    """Fetch the fastembed model into the cache unless it is there (`progress`: with
    huggingface_hub's bar on stderr; `say` is told what is fetched, before), and load it
    once to know it works. The other providers have nothing to fetch: a result that says
    why."""
    provider = settings.provider
    if provider == "fastembed":
        from kenomem.embed import local

        got = local.fetch(settings, progress, say)
        folder: Path = got.folder
        return PullResult(
            provider,
            settings.model or local.DEFAULT_MODEL,
            got.fetched,
            str(folder),
            local.folder_bytes(folder),
            got.dimension,
            round(got.seconds, 3),
            "the model is read from [embeddings] model_path: nothing to fetch"
            if settings.model_path
            else "",
        )
    if provider == "openai":
        from kenomem.embed.http import DEFAULT_BASE_URL

        where = settings.base_url or DEFAULT_BASE_URL
        note = f"nothing to fetch: the openai provider's model is served by {where}"
        return PullResult(provider, settings.model, False, "", 0, 0, 0.0, note)
    return PullResult(provider, "", False, "", 0, 0, 0.0, NOTHING_WITHOUT_PROVIDER)
