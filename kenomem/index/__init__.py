"""The search index behind a small interface of our own, so the engine can change.

Retrieval talks to `Engine` only: `apply` (add, update and delete in one batch), `search`,
`browse`, `lookup`, `rebuild` and `count`. Documents and hits are plain records; the
engine owns its analysis (stemming, stop words) so that queries and documents are always
analysed alike.
"""

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple, Protocol

from kenomem.errors import ConfigError, KenomemError

# Bump when the schema or the analysis changes: a different version means a rebuild.
SCHEMA_VERSION = 5


class Doc(NamedTuple):
    id: str
    path: str
    type: str
    status: str
    scope: str
    title: str
    tags: tuple[str, ...]
    body: str
    created: float  # epoch seconds
    time: float  # `when` for episodes, else created: what --since/--until filter on
    last_accessed: float
    updated: float
    access_count: int
    reinforced: int
    importance: int
    pinned: bool
    session: str = ""
    preview: str = ""
    digest: str = ""  # of the file's bytes when indexed: a touch checks it is unchanged
    factkey: str = ""  # "subject|attribute" of a fact (see facts.py), for the sleep cycle
    people: tuple[str, ...] = ()  # an episode's participants


class Filters(NamedTuple):
    types: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ("active",)
    tags: tuple[str, ...] = ()  # all of them
    scopes: tuple[str, ...] = ()
    since: float | None = None
    until: float | None = None
    ids: tuple[str, ...] = ()
    factkeys: tuple[str, ...] = ()


class Boosts(NamedTuple):
    title: float = 3.0
    tags: float = 2.0
    body: float = 1.0


# The stored fields `browse` can sort on, on every engine.
SORTABLE = ("created", "time", "importance", "last_accessed", "title")


def check_sort(sort: str) -> None:
    if sort not in SORTABLE:
        raise KenomemError(f"cannot sort by {sort!r} (one of: {', '.join(SORTABLE)})")


class Hit(NamedTuple):
    """A stored document and its BM25F score (0 when browsing)."""

    doc: Doc
    score: float = 0.0


class SearchResult(NamedTuple):
    hits: list[Hit]
    terms: tuple[str, ...]  # the analysed query terms
    total: int = 0


class SyncBatch:
    """One write to the index: documents to add or replace, ids to delete."""

    __slots__ = ("deletes", "upserts")

    def __init__(self) -> None:
        self.upserts: list[Doc] = []
        self.deletes: list[str] = []

    def __bool__(self) -> bool:
        return bool(self.upserts or self.deletes)


Progress = Callable[[int], None]


class Engine(Protocol):
    name: str

    def exists(self) -> bool: ...

    def apply(self, batch: SyncBatch) -> None: ...

    def search(self, text: str, filters: Filters, boosts: Boosts, limit: int) -> SearchResult: ...

    def near(self, text: str, filters: Filters, share: float, limit: int) -> SearchResult: ...

    def known_terms(self, terms: Iterable[str], ignore: Iterable[str] = ()) -> set[str]: ...

    def browse(
        self, filters: Filters, sort: str, reverse: bool, limit: int | None
    ) -> SearchResult: ...

    def lookup(self, ids: Iterable[str]) -> dict[str, Doc]: ...

    def rebuild(self, docs: Iterable[Doc], progress: Progress | None = None) -> int: ...

    def count(self) -> int: ...

    def analyze(self, text: str) -> list[str]: ...

    def term_offsets(self, text: str, wanted: Iterable[str]) -> list[tuple[str, int]]: ...

    def size_bytes(self) -> int: ...


ENGINES = ("whoosh", "tantivy")


def drop_other_engines(directory: Path, keep: str) -> None:
    """An engine switched away from leaves its index in `directory/<name>` (hundreds of
    MB at 100k): derived and no longer read, so it goes once the new one is built."""
    import shutil

    for name in ENGINES:
        if name != keep:
            shutil.rmtree(directory / name, ignore_errors=True)


def open_engine(name: str, directory: Path, lock_timeout: float = 30.0) -> Engine:
    """The engine `index.engine` names, keeping its files in `directory/<name>`."""
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
