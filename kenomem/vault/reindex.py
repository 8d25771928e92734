"""`reindex`: rebuild the index from the files, measured."""

import time
from typing import NamedTuple

from kenomem.files.scan import scan
from kenomem.index import Progress
from kenomem.vault.core import CoreVault


class ReindexResult(NamedTuple):
    indexed: int
    files: int
    seconds: float
    per_second: float
    unreadable: dict[str, str]


def count_files(vault: CoreVault) -> int:
    """How many files a rebuild will read (for a progress bar's total)."""
    return len(scan(vault.root).files)


def reindex(vault: CoreVault, progress: Progress | None = None) -> ReindexResult:
    started = time.perf_counter()
    report = vault.rebuild(progress)
    seconds = time.perf_counter() - started
    files = len(vault.state)
    return ReindexResult(
        report.indexed,
        files,
        round(seconds, 3),
        round(files / seconds, 1) if seconds > 0 else 0.0,
        report.errors,
    )
