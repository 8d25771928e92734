"""The Whoosh engine (whoosh3): BM25F over title, tags and body, stemmed.

Tuned from measured facts: segments are written non-compound (a compound segment is
copied into memory each time a reader opens it), the index is never optimised on a
command's path, and queries are built directly from the analyser's terms, so a search
does not import Whoosh's query parser.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kenomem.errors import IndexCorrupt, KenomemError, LockTimeout, is_storage_error
from kenomem.index.engine import (
    Boosts,
    Doc,
    Filters,
    Hit,
    Progress,
    SearchResult,
    SyncBatch,
    built_beside,
    check_sort,
)
from kenomem.index.whoosh_schema import analyzer, doc_of, schema, stored_fields

# A rebuild of at least this many memories is shared among processes.
_PARALLEL_FROM = 2000


def _procs() -> int:
    """Writer processes for a bulk rebuild: one more than the cores (the first one also
    reads the files), at most four; one where processes cannot be forked."""
    if not sys.platform.startswith("linux"):
        return 1  # elsewhere a new process starts from nothing: not worth it
    return max(1, min(4, (os.cpu_count() or 1) + 1))


_OPEN_ATTEMPTS = 3  # opening a searcher while other processes commit


class WhooshEngine:
    name = "whoosh"
    prepares_apart = False  # its bulk writer analyses in processes of its own

    def __init__(self, directory: Path, lock_timeout: float = 30.0) -> None:
        self.directory = directory
        self.lock_timeout = lock_timeout
        self._ix: Any = None

    # -- opening ---------------------------------------------------------------------

    def exists(self) -> bool:
        return (self.directory).is_dir() and any(
            name.startswith("_MAIN_") and name.endswith(".toc")
            for name in os.listdir(self.directory)
        )

    def _index(self) -> Any:
        if self._ix is None:
            from whoosh.index import FileIndex

            from kenomem.index.whoosh_storage import SealedStorage

            with _corruption_guard():
                self._ix = FileIndex(SealedStorage(str(self.directory)), indexname="MAIN")
        return self._ix

    @contextmanager
    def _searcher(self) -> Iterator[Any]:
        from whoosh.scoring import BM25F

        searcher = self._open_searcher(BM25F())
        try:
            with _corruption_guard():
                yield searcher
        finally:
            searcher.close()

    def _open_searcher(self, weighting: Any) -> Any:
        for attempt in range(_OPEN_ATTEMPTS):
            try:
                with _corruption_guard():
                    return self._index().searcher(weighting=weighting)
            except IndexCorrupt as exc:
                # A commit in another process removed the files of the generation this
                # one had just read of: read the new one, rather than rebuild everything.
                if attempt + 1 == _OPEN_ATTEMPTS or not isinstance(
                    exc.__cause__, FileNotFoundError
                ):
                    raise
                self._ix = None
        raise AssertionError("unreachable")

    # -- writing ---------------------------------------------------------------------

    def apply(self, batch: SyncBatch) -> None:
        if not batch:
            return
        from whoosh.index import LockError

        ix = self._index()
        try:
            writer = ix.writer(timeout=self.lock_timeout, delay=0.05, compound=False)
        except LockError:
            raise LockTimeout("the index is locked by another writer") from None
        try:
            with _corruption_guard():
                for doc_id in batch.deletes:
                    writer.delete_by_term("id", doc_id)
                for doc in batch.upserts:
                    writer.update_document(**stored_fields(doc))
                writer.commit()
        except BaseException:
            _cancel(writer)
            raise
        self._ix = None  # the next reader sees the new generation

    def prepare(self, doc: Doc) -> Doc:
        return doc

    def rebuild(self, docs: Iterable[Doc], progress: Progress | None = None) -> int:
        """Build a fresh index beside the old one, then swap it in with renames."""
        from whoosh.index import FileIndex

        from kenomem.index.whoosh_storage import SealedStorage

        count = 0
        stream = iter(docs)
        first = list(itertools.islice(stream, _PARALLEL_FROM))
        with built_beside(self.directory) as fresh:
            ix = FileIndex.create(SealedStorage(str(fresh)), schema(), "MAIN")
            procs = _procs() if len(first) == _PARALLEL_FROM else 1
            if procs > 1:
                # Each process analyses and writes its own segment; they are not merged
                # (a merge would cost as much again), and a few segments search as fast.
                writer = ix.writer(procs=procs, multisegment=True, limitmb=64, compound=False)
            else:
                writer = ix.writer(limitmb=128, compound=False)
            try:
                for doc in itertools.chain(first, stream):
                    writer.add_document(**stored_fields(doc))
                    count += 1
                    if progress is not None:
                        progress(count)
                writer.commit(merge=False)
            except BaseException:
                _cancel(writer)
                raise
        self._ix = None
        return count

    # -- reading ---------------------------------------------------------------------

    def count(self) -> int:
        with _corruption_guard():
            return int(self._index().doc_count())

    def analyze(self, text: str) -> list[str]:
        return [token.text for token in analyzer()(text)]

    def term_offsets(self, text: str, wanted: Iterable[str]) -> list[tuple[str, int]]:
        """Where the `wanted` terms occur in `text`: (term, start character) pairs.

        The same analysis as the index (the analyser's word pattern, lower case, Porter
        stem), but a word is only stemmed when its first letter can start a wanted term:
        a Porter stem keeps a word's first letter, and stemming every word of every result
        would cost more than the search.
        """
        from whoosh.lang.porter import stem

        tokenizer = analyzer().items[0]  # its RegexTokenizer
        wanted = set(wanted)
        heads = {term[:1] for term in wanted}
        found = []
        stems: dict[str, str] = {}  # each word stemmed once
        for match in tokenizer.expression.finditer(text):
            word = match.group().lower()
            if word[:1] in heads:
                term = stems.get(word) or stems.setdefault(word, stem(word))
                if term in wanted:
                    found.append((term, match.start()))
        return found

    def search(self, text: str, filters: Filters, boosts: Boosts, limit: int) -> SearchResult:
        from whoosh import query as q

        terms = tuple(dict.fromkeys(self.analyze(text)))
        if not terms:
            return SearchResult([], terms)
        fields = [
            (name, boost)
            for name, boost in (
                ("titletext", boosts.title),
                ("tagtext", boosts.tags),
                ("body", boosts.body),
            )
            if boost > 0
        ]
        clauses = [q.Term(name, term, boost=boost) for term in terms for name, boost in fields]
        with self._searcher() as searcher:
            results = searcher.search(q.Or(clauses), filter=_filter_query(filters), limit=limit)
            hits = [Hit(doc_of(hit.fields()), float(hit.score)) for hit in results]
            total = results.scored_length()
        return SearchResult(hits, terms, total)

    def doc_frequencies(
        self, terms: Iterable[str], field: str = "body"
    ) -> tuple[dict[str, int], int]:
        """How many documents hold each term in `field`, and how many there are."""
        with self._searcher() as searcher:
            found = {t: searcher.doc_frequency(field, t) for t in terms}
            return found, searcher.doc_count()

    def related(self, concepts: Iterable[str], filters: Filters, limit: int) -> SearchResult:
        from whoosh import query as q

        clauses = [q.Term("concepts", c) for c in concepts]
        if not clauses or limit <= 0:
            return SearchResult([], ())
        with self._searcher() as searcher:
            results = searcher.search(
                q.Or(clauses), filter=_filter_query(filters), limit=limit, scored=False
            )
            return SearchResult([Hit(doc_of(hit.fields())) for hit in results], (), len(results))

    def known_terms(self, terms: Iterable[str], ignore: Iterable[str] = ()) -> set[str]:
        """The analysed terms that some document's title or body holds, not counting the
        documents with the ids in `ignore`."""
        with self._searcher() as searcher:
            reader = searcher.reader()
            skip = {searcher.document_number(id=doc_id) for doc_id in ignore} - {None}
            return {
                t
                for t in terms
                if _held(reader, "body", t, skip) or _held(reader, "titletext", t, skip)
            }

    def near(self, text: str, filters: Filters, share: float, limit: int) -> SearchResult:
        """Documents that may hold at least `share` of the words of `text`.

        Such a document must contain one of the rarest n - ceil(share * n) + 1 words (it
        can miss at most n - ceil(share * n) of them), so only those are searched: a few
        short posting lists instead of every word's.
        """
        import math

        from whoosh import query as q

        terms = list(dict.fromkeys(self.analyze(text)))
        if not terms:
            return SearchResult([], ())
        keep = len(terms) - math.ceil(share * len(terms)) + 1
        with self._searcher() as searcher:
            rare = sorted(terms, key=lambda t: searcher.doc_frequency("body", t))[:keep]
            clauses = [q.Term(field, t) for t in rare for field in ("body", "titletext")]
            results = searcher.search(q.Or(clauses), filter=_filter_query(filters), limit=limit)
            hits = [Hit(doc_of(hit.fields()), float(hit.score)) for hit in results]
        return SearchResult(hits, tuple(terms), len(hits))

    def browse(
        self,
        filters: Filters,
        sort: str | None = "created",
        reverse: bool = True,
        limit: int | None = None,
    ) -> SearchResult:
        from whoosh import query as q

        query = _filter_query(filters) or q.Every()
        with self._searcher() as searcher:
            if sort is None:  # in no order: no sort key to read for every document
                results = searcher.search(query, limit=limit, scored=False)
            else:
                check_sort(sort)
                results = searcher.search(query, limit=limit, sortedby=sort, reverse=reverse)
            return SearchResult([Hit(doc_of(hit.fields())) for hit in results], (), len(results))

    def lookup(self, ids: Iterable[str]) -> dict[str, Doc]:
        found: dict[str, Doc] = {}
        with self._searcher() as searcher:
            for doc_id in ids:
                stored = searcher.document(id=doc_id)
                if stored is not None:
                    found[doc_id] = doc_of(stored)
        return found

    def size_bytes(self) -> int:
        try:
            return sum(entry.stat().st_size for entry in os.scandir(self.directory))
        except FileNotFoundError:
            return 0


def _filter_query(filters: Filters) -> Any:
    from whoosh import query as q

    parts: list[Any] = []

    def any_of(field: str, values: Iterable[str], lower: bool = False) -> None:
        terms = [q.Term(field, v.lower() if lower else v) for v in values]
        if terms:
            parts.append(terms[0] if len(terms) == 1 else q.Or(terms))

    any_of("type", filters.types)
    any_of("status", filters.statuses)
    any_of("scope", filters.scopes)
    any_of("id", filters.ids)
    any_of("factkey", filters.factkeys)
    parts.extend(q.Term("tags", tag.lower()) for tag in filters.tags)
    if filters.since is not None or filters.until is not None:
        parts.append(q.NumericRange("time", filters.since, filters.until))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else q.And(parts)


_CORRUPT: tuple[type[BaseException], ...] = (
    EOFError,
    OSError,
    ValueError,
    KeyError,
    IndexError,
    TypeError,
    AttributeError,
    AssertionError,
)


def _held(reader: Any, field: str, term: str, skip: set[Any]) -> bool:
    """Whether a live document, not one of `skip`, holds the term."""
    if (field, term) not in reader:
        return False
    matcher = reader.postings(field, term)  # without deleted documents
    while matcher.is_active():
        if matcher.id() not in skip:
            return True
        matcher.next()
    return False


def _cancel(writer: Any) -> None:
    """Give up a writer's work and its lock, keeping the error that made us: a commit that
    failed half way (a full disk) has closed the writer already, and a second `cancel`
    would raise "this writer is closed" in place of the cause."""
    if getattr(writer, "is_closed", False):
        return
    try:
        writer.cancel()
    except Exception:  # the caller re-raises the first error, the one to report
        pass


@contextmanager
def _corruption_guard() -> Iterator[None]:
    """Turn the ways a damaged index fails (bare EOFError among them) into IndexCorrupt."""
    import pickle
    import struct
    import zlib

    from whoosh.filedb.filestore import StorageError
    from whoosh.filedb.filetables import FileFormatError
    from whoosh.index import IndexError as WhooshIndexError
    from whoosh.index import LockError
    from whoosh.reading import CorruptIndexError

    damaged: tuple[type[BaseException], ...] = (
        *_CORRUPT,
        WhooshIndexError,
        CorruptIndexError,
        FileFormatError,
        StorageError,
        pickle.UnpicklingError,
        struct.error,
        zlib.error,
    )
    try:
        yield
    except (KenomemError, LockError):
        raise
    except OSError as exc:
        if is_storage_error(exc):
            raise  # the disk refused (full, read-only): the index is as it was
        raise IndexCorrupt(f"the index cannot be read ({type(exc).__name__}: {exc})") from exc
    except damaged as exc:
        raise IndexCorrupt(f"the index cannot be read ({type(exc).__name__}: {exc})") from exc
