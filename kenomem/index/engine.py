"""The index's interface: the records it holds and returns, and `Engine`, which each
engine (Whoosh, tantivy) implements.

Retrieval talks to `Engine` only: `apply` (add, update and delete in one batch), `search`,
`browse`, `lookup`, `rebuild` and `count`. Documents and hits are plain records; the
engine owns its analysis (stemming, stop words) so that queries and documents are always
analysed alike.
"""

# No `from __future__ import annotations`: its records are made at every cold start
# (docs/architecture.md, fast start).

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from kenomem.errors import KenomemError
from kenomem.files import beneath

# Bump when the schema or the analysis changes: a different version means a rebuild.
SCHEMA_VERSION = 8


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
    concepts: tuple[str, ...] = ()  # tags, link targets and names it holds (concepts.py)
    textkey: str = ""  # of its title and body (memory.meaning_key): what its vector is of


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
    # Whether a rebuild gains from making its documents (`prepare`) in worker processes:
    # true of an engine that indexes in one process (see rebuild.py).
    prepares_apart: bool

    def exists(self) -> bool: ...

    def apply(self, batch: SyncBatch) -> None: ...

    def search(self, text: str, filters: Filters, boosts: Boosts, limit: int) -> SearchResult: ...

    def near(self, text: str, filters: Filters, share: float, limit: int) -> SearchResult: ...

    def known_terms(self, terms: Iterable[str], ignore: Iterable[str] = ()) -> set[str]: ...

    def doc_frequencies(
        self, terms: Iterable[str], field: str = "body"
    ) -> tuple[dict[str, int], int]: ...

    def related(self, concepts: Iterable[str], filters: Filters, limit: int) -> SearchResult:
        """Documents that hold any of these concepts (unscored)."""
        ...

    def browse(
        self, filters: Filters, sort: str | None, reverse: bool, limit: int | None
    ) -> SearchResult:
        """The documents the filters let through, sorted by `sort` (None: in no order,
        which spares reading a sort key of every document)."""
        ...

    def lookup(self, ids: Iterable[str]) -> dict[str, Doc]: ...

    def prepare(self, doc: Doc) -> Any:
        """What `rebuild` takes of `doc`: the Doc itself, or the engine's form of it, made
        in any process (it must pickle)."""
        ...

    def rebuild(self, docs: Iterable[Any], progress: Progress | None = None) -> int:
        """A fresh index of these documents (Docs, or what `prepare` made of them)."""
        ...

    def count(self) -> int: ...

    def analyze(self, text: str) -> list[str]: ...

    def term_offsets(self, text: str, wanted: Iterable[str]) -> list[tuple[str, int]]: ...

    def size_bytes(self) -> int: ...


ENGINES = ("whoosh", "tantivy")


@contextmanager
def built_beside(directory: Path) -> Iterator[Path]:
    """A new, empty folder beside `directory` to build a fresh index in: swapped in for
    `directory` with renames when the block ends, removed if the block fails.

    The index folder's parent (`.kenomem/index`) is held by descriptor, a real folder of
    the user's own (`beneath.private`: a link there is `UnsafePath`), and the new folder
    is made, renamed into place and the old one removed relative to it: whatever is at
    `directory`'s name is renamed and removed as itself, a symlink as the link, never
    what it points to."""
    import os

    name = directory.name
    fresh, old = f"{name}.new-{os.getpid()}", f"{name}.old-{os.getpid()}"
    with beneath.private(directory.parent.parent, directory.parent.name) as parent:
        _discard(parent, fresh)
        os.mkdir(fresh, 0o700, dir_fd=parent.fd)
        try:
            yield directory.with_name(fresh)
            try:
                os.replace(name, old, src_dir_fd=parent.fd, dst_dir_fd=parent.fd)
            except FileNotFoundError:
                pass  # the first index
            os.replace(fresh, name, src_dir_fd=parent.fd, dst_dir_fd=parent.fd)
            _discard(parent, old)
        finally:
            _discard(parent, fresh)


def drop_planted_link(directory: Path) -> None:
    """Remove a symlink at the name of the engine's folder `directory` (kenomem never
    makes one there; a `git clone` of a vault that holds one could), as the link: the
    engine then finds no index and it is rebuilt, never read or written through the link
    (another vault's index, or anything else). The folder above it (`.kenomem/index`) is
    held by descriptor, a real folder of the user's own, else `UnsafePath`."""
    import os
    import stat

    try:
        above = os.lstat(directory.parent)
        mine = os.name != "posix" or above.st_uid == os.geteuid()
        if mine and stat.S_ISDIR(above.st_mode) and not os.path.islink(directory):
            return  # the usual case, quickly
    except FileNotFoundError:
        return  # no index yet
    try:
        parent = beneath.private(directory.parent.parent, directory.parent.name, create=False)
    except FileNotFoundError:
        return  # no index yet
    with parent:
        if beneath.is_link(parent, directory.name):
            try:
                os.unlink(directory.name, dir_fd=parent.fd)
            except FileNotFoundError:
                pass  # removed meanwhile by another process


def drop_other_engines(directory: Path, keep: str) -> None:
    """An engine switched away from leaves its index in `directory/<name>` (hundreds of
    MB at 100k): derived and no longer read, so it goes once the new one is built (from
    `directory` held by descriptor: a link in an index's place goes as the link)."""
    try:
        parent = beneath.private(directory.parent, directory.name, create=False)
    except FileNotFoundError:
        return
    with parent:
        for name in ENGINES:
            if name != keep:
                _discard(parent, name)


def _discard(parent: beneath.Folder, name: str) -> None:
    """Remove `name` from the folder `parent` holds (`beneath.remove_in`), as best it can:
    what is left is a leftover that `reindex` and `doctor --fix` remove."""
    try:
        beneath.remove_in(parent, name)
    except OSError:
        pass
