"""`reindex`: rebuild the index from the files, then make every vector the store wants
(with an embeddings provider), measured."""

import time
from collections.abc import Callable
from typing import NamedTuple

from kenomem.files.plural import counted
from kenomem.files.scan import scan
from kenomem.index import Progress
from kenomem.vault.core import CoreVault


class ReindexResult(NamedTuple):
    indexed: int
    files: int
    seconds: float
    per_second: float
    unreadable: dict[str, str]
    embedded: int = 0  # vectors made (an unchanged memory keeps the one it has)
    embed_seconds: float = 0.0
    without_vector: int = 0  # memories left without one (the provider failed)


def count_files(vault: CoreVault) -> int:
    """How many files a rebuild will read (for a progress bar's total)."""
    return len(scan(vault.root).files)


def reindex(
    vault: CoreVault,
    progress: Progress | None = None,
    embedding: Callable[[int], Progress] | None = None,
) -> ReindexResult:
    """`embedding`, given how many vectors are to be made, gives their progress callback."""
    started = time.perf_counter()
    report = vault.rebuild(progress)
    seconds = time.perf_counter() - started
    files = len(vault.state)
    made, left, embed_seconds = embed_all(vault, embedding)
    return ReindexResult(
        report.indexed,
        files,
        round(seconds, 3),
        round(files / seconds, 1) if seconds > 0 else 0.0,
        report.errors,
        made,
        round(embed_seconds, 3),
        left,
    )


def embed_all(
    vault: CoreVault, embedding: Callable[[int], Progress] | None = None
) -> tuple[int, int, float]:
    """Every vector the store wants, made: (made, left without one, seconds)."""
    meaning = vault.meaning
    if meaning is None:
        return 0, 0, 0.0
    from kenomem.embed.provider import EmbeddingsUnavailable

    started = time.perf_counter()
    try:
        meaning.embedder  # noqa: B018 (numpy there, and the provider made from its settings)
    except EmbeddingsUnavailable as exc:
        # No vector can be read or made (numpy is missing): every memory is found by its
        # words alone. The rebuild met the same error and said so in these words.
        warning = f"recall by meaning is off: {exc}"
        if warning not in vault.warnings:
            vault.warnings.append(warning)
        return 0, vault.engine.count(), time.perf_counter() - started
    wanted = 0
    try:
        if not meaning.same_model(lambda: vault.lock):
            vault.warnings.append("the model's vectors changed length: every vector is made again")
        vault.meaning_ready()
        wanted = len(meaning.store().pending())
        tick = embedding(wanted) if embedding is not None and wanted else None
        done = [0]

        def made_more(step: int) -> None:
            done[0] += step
            if tick is not None:
                tick(done[0])

        filled = meaning.fill(vault.meaning_texts, lambda: vault.lock, None, made_more)
    except EmbeddingsUnavailable as exc:
        left = len(meaning.store().pending())
        made = max(0, wanted - left)  # the batches before the failure are kept
        vault.warnings.append(
            f"{counted(made, 'vector')} made, then {exc}: {counted(left, 'memory')} "
            f"{'is' if left == 1 else 'are'} found by their words alone until `kenomem "
            "reindex` makes their vectors"
            if made
            else f"no vector was made: {exc}; recall is by keywords alone"
        )
        return made, left, time.perf_counter() - started
    vault.warnings.extend(meaning.warnings)
    meaning.warnings.clear()
    return filled.made, filled.left, time.perf_counter() - started
