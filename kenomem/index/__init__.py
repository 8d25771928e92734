"""The search index behind a small interface of our own, so the engine can change.

Retrieval talks to `Engine` only: `apply` (add, update and delete in one batch), `search`,
`browse`, `lookup`, `rebuild` and `count`. Documents and hits are plain records; the
engine owns its analysis (stemming, stop words) so that queries and documents are always
analysed alike.
"""

from __future__ import annotations

from pathlib import Path

from kenomem.errors import ConfigError
from kenomem.index.engine import (
    ENGINES,
    SCHEMA_VERSION,
    SORTABLE,
    Boosts,
    Doc,
    Engine,
    Filters,
    Hit,
    Progress,
    SearchResult,
    SyncBatch,
    built_beside,
    check_sort,
    drop_other_engines,
    drop_planted_link,
)

__all__ = [
    "ENGINES",
    "SCHEMA_VERSION",
    "SORTABLE",
    "Boosts",
    "Doc",
    "Engine",
    "Filters",
    "Hit",
    "Progress",
    "SearchResult",
    "SyncBatch",
    "built_beside",
    "check_sort",
    "drop_other_engines",
    "open_engine",
]


def open_engine(name: str, directory: Path, lock_timeout: float = 30.0) -> Engine:
    """The engine `index.engine` names, keeping its files in `directory/<name>`."""
    if name in ENGINES:
        drop_planted_link(directory / name)  # never an index read through a link
    if name == "whoosh":
        from kenomem.index.whoosh_engine import WhooshEngine

        return WhooshEngine(directory / "whoosh", lock_timeout)
    if name == "tantivy":
        try:
            from kenomem.index.tantivy_engine import TantivyEngine
        except ImportError as exc:
            if exc.name != "tantivy":
                raise
            raise ConfigError(
                'index.engine = "tantivy" needs the tantivy package, which is not installed',
                hint="pip install 'kenomem[tantivy]'",
            ) from None
        return TantivyEngine(directory / "tantivy", lock_timeout)
    raise ConfigError(f"unknown index engine {name!r} (known: {', '.join(ENGINES)})")
