"""The tantivy engine: the same fields, terms and scores as the Whoosh engine, in Rust.

- Analysis: the text is analysed in Python exactly as Whoosh does it (stemming.py) and
  handed to tantivy as space-separated terms, so both engines hold the same terms.
- Scoring: tantivy's BM25 has the same shape as Whoosh's BM25F (k1 = 1.2, b = 0.75, the
  field's own average length) but another idf: log(1 + (N - n + 0.5) / (n + 0.5)) where
  Whoosh has log(N / (n + 1)) + 1. Each term query is boosted by the ratio of the two, so
  a hit scores what it scores on Whoosh. What still differs: both engines keep field
  lengths in one lossy byte, encoded differently, and count deleted documents until
  segments merge (tests/index/test_engines.py bounds the difference in the top 10).
- Storage: what a hit shows lives in one stored JSON field, so recall never parses YAML.
- Errors: tantivy reports a damaged index with ValueError or OSError, and sometimes with
  pyo3's PanicException, which derives from BaseException: all become IndexCorrupt.
- Writers: tantivy allows one writer per index, taken with a lock file that dies with its
  process; a second writer waits up to `lock_timeout` seconds. Readers never wait.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import tantivy

from kenomem.errors import LockTimeout
from kenomem.index import stemming
from kenomem.index.analysis import title_adds
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
from kenomem.index.tantivy_io import corruption_guard as _corruption_guard
from kenomem.index.tantivy_io import open_index

_TERMS = "terms"  # the tokenizer of pre-analysed fields
_SEARCHED = ("titletext", "tagtext", "body")
# A small writer for a command's batch, a larger one for a rebuild.
_BATCH_HEAP = 32_000_000
_REBUILD_HEAP = 128_000_000


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    for name in ("id", "type", "status", "scope", "factkey", "tags", "concepts"):
        sb.add_text_field(name, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("title", fast=True, tokenizer_name="raw", index_option="basic")
    for name in _SEARCHED:
        sb.add_text_field(name, tokenizer_name=_TERMS, index_option="freq")
    for name in ("created", "time", "last_accessed"):
        sb.add_float_field(name, fast=True)
    sb.add_integer_field("importance", fast=True)
    sb.add_bytes_field("stored", stored=True)
    return sb.build()


def _analyzer() -> tantivy.TextAnalyzer:
    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()


def _rollback(writer: Any) -> None:
    try:
        writer.rollback()
    except Exception:  # the error being raised is the one to report
        pass


def _prepare(ix: Any) -> None:
    ix.register_tokenizer(_TERMS, _analyzer())
    ix.config_reader(reload_policy="Manual", num_warmers=0)


class TantivyEngine:
    name = "tantivy"
    prepares_apart = True  # the analysis is Python's; a rebuild's writer runs in threads

    def __init__(self, directory: Path, lock_timeout: float = 30.0) -> None:
        self.directory = directory
        self.lock_timeout = lock_timeout
        self._ix: Any = None
        self._seen: tuple[int, ...] = ()
        self._refused: OSError | None = None  # why the folder can only be read, if so
        self._schema = _schema()

    # -- opening ---------------------------------------------------------------------

    def exists(self) -> bool:
        return (self.directory / "meta.json").is_file()

    def _index(self) -> Any:
        """The index, as another process may have committed or rebuilt it since."""
        stamp = self._stamp()
        if self._ix is not None and stamp[0] != self._seen[0]:
            self._ix = None  # a rebuild swapped in another folder
        if self._ix is not None and self._refused is not None and stamp != self._seen:
            self._ix = None  # read from a copy: copy the new commit
        if self._ix is None:
            self._ix, self._refused = open_index(self.directory, _prepare)
        elif stamp != self._seen:
            with _corruption_guard():
                self._ix.reload()
        self._seen = stamp
        return self._ix

    def _stamp(self) -> tuple[int, ...]:
        try:
            folder = os.stat(self.directory)
            meta = os.stat(self.directory / "meta.json")
        except FileNotFoundError:
            return (-1,)
        return (folder.st_ino, meta.st_ino, meta.st_mtime_ns, meta.st_size)

    def _reload(self) -> None:
        if self._seen:
            self._seen = (self._seen[0], -1)  # the next reader loads the new commit

    @contextmanager
    def _searcher(self) -> Iterator[Any]:
        ix = self._index()
        with _corruption_guard():
            yield ix.searcher()

    # -- writing ---------------------------------------------------------------------

    def apply(self, batch: SyncBatch) -> None:
        if not batch:
            return
        ix = self._index()
        if self._refused is not None:  # read from a copy: the folder cannot be written
            raise OSError(self._refused.errno, self._refused.strerror, str(self.directory))
        with _corruption_guard(self.directory):
            writer = self._writer(ix, _BATCH_HEAP, 1)
            try:
                for doc_id in batch.deletes:
                    writer.delete_documents_by_term("id", doc_id)
                for doc in batch.upserts:
                    writer.delete_documents_by_term("id", doc.id)
                    writer.add_document(self._document(doc))
                writer.commit()
                writer.wait_merging_threads()  # frees the lock now, not when collected
            except BaseException:
                _rollback(writer)
                raise
            finally:
                # Dropped here, also when the commit failed (a full disk): the error's
                # traceback must not keep the writer, and its lock, alive.
                del writer
        self._reload()

    def _writer(self, ix: Any, heap: int, threads: int) -> Any:
        deadline = time.monotonic() + self.lock_timeout
        while True:
            try:
                return ix.writer(heap, threads)
            except ValueError as exc:
                if "LockBusy" not in str(exc):
                    raise
                if time.monotonic() >= deadline:
                    raise LockTimeout("the index is locked by another writer") from None
                time.sleep(0.05)

    def prepare(self, doc: Doc) -> dict[str, Any]:
        """The fields of `doc` as tantivy takes them, its text analysed: the Python part
        of indexing, which a rebuild does in worker processes."""
        return _fields(doc)

    def _document(self, doc: Doc | dict[str, Any]) -> tantivy.Document:
        fields = _fields(doc) if isinstance(doc, Doc) else doc
        return tantivy.Document.from_dict(fields, self._schema)

    def rebuild(
        self, docs: Iterable[Doc | dict[str, Any]], progress: Progress | None = None
    ) -> int:
        """Build a fresh index beside the old one, then swap it in with renames.

        `docs` are Docs or what `prepare` made of them. One indexing thread: the
        documents keep the order they come in, as on Whoosh (ties when browsing come in
        that order).
        """
        count = 0
        self._ix = None
        writer = None
        with built_beside(self.directory) as fresh:
            try:
                with _corruption_guard(self.directory):
                    ix = tantivy.Index(self._schema, path=str(fresh))
                    ix.register_tokenizer(_TERMS, _analyzer())
                    writer = ix.writer(_REBUILD_HEAP, 1)
                for doc in docs:
                    document = self._document(doc)
                    with _corruption_guard(self.directory):
                        writer.add_document(document)
                    count += 1
                    if progress is not None:
                        progress(count)
                with _corruption_guard(self.directory):
                    writer.commit()
                    writer.wait_merging_threads()
                writer = None  # closes it: the folder can be renamed
                del ix
            except BaseException:
                if writer is not None:
                    _rollback(writer)
                    writer = None
                raise
        return count

    # -- reading ---------------------------------------------------------------------

    def count(self) -> int:
        with self._searcher() as searcher:
            return int(searcher.num_docs)

    def analyze(self, text: str) -> list[str]:
        return stemming.analyze(text)

    def term_offsets(self, text: str, wanted: Iterable[str]) -> list[tuple[str, int]]:
        return stemming.term_offsets(text, wanted)

    def search(self, text: str, filters: Filters, boosts: Boosts, limit: int) -> SearchResult:
        terms = tuple(dict.fromkeys(stemming.analyze(text)))
        if not terms:
            return SearchResult([], terms)
        fields = [(name, boost) for name, boost in zip(_SEARCHED, boosts, strict=True) if boost > 0]
        with self._searcher() as searcher:
            hits = self._scored(searcher, terms, fields, filters, limit)
        return SearchResult(hits, terms, len(hits))

    def near(self, text: str, filters: Filters, share: float, limit: int) -> SearchResult:
        """Documents that may hold at least `share` of the words of `text`: see
        WhooshEngine.near (only the rarest words that such a document must hold one of)."""
        terms = list(dict.fromkeys(stemming.analyze(text)))
        if not terms:
            return SearchResult([], ())
        keep = len(terms) - math.ceil(share * len(terms)) + 1
        with self._searcher() as searcher:
            rare = sorted(terms, key=lambda t: searcher.doc_freq("body", t))[:keep]
            fields = [("body", 1.0), ("titletext", 1.0)]
            hits = self._scored(searcher, rare, fields, filters, limit)
        return SearchResult(hits, tuple(terms), len(hits))

    def _scored(
        self,
        searcher: Any,
        terms: Iterable[str],
        fields: list[tuple[str, float]],
        filters: Filters,
        limit: int,
    ) -> list[Hit]:
        """Hits of any of the terms in any of the fields, scored as Whoosh's BM25F does."""
        total = searcher.num_docs
        clauses = []
        for term in terms:
            for name, boost in fields:
                n = searcher.doc_freq(name, term)
                if n:
                    query = tantivy.Query.term_query(self._schema, name, term, index_option="freq")
                    weight = boost * _whoosh_idf(total, n) / _tantivy_idf(total, n)
                    clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(query, weight)))
        if not clauses or limit <= 0:
            return []
        query = self._filtered(tantivy.Query.boolean_query(clauses), filters)
        found = searcher.search(query, limit, count=False)
        return [Hit(_doc(searcher.doc(address)), float(score)) for score, address in found.hits]

    def doc_frequencies(
        self, terms: Iterable[str], field: str = "body"
    ) -> tuple[dict[str, int], int]:
        """How many documents hold each term in `field`, and how many there are."""
        with self._searcher() as searcher:
            return {t: searcher.doc_freq(field, t) for t in terms}, searcher.num_docs

    def related(self, concepts: Iterable[str], filters: Filters, limit: int) -> SearchResult:
        wanted = list(concepts)
        if not wanted or limit <= 0:
            return SearchResult([], ())
        query = tantivy.Query.term_set_query(self._schema, "concepts", wanted)
        with self._searcher() as searcher:
            found = searcher.search(self._filtered(query, filters), limit, count=False)
            hits = [Hit(_doc(searcher.doc(address))) for _, address in found.hits]
        return SearchResult(hits, (), len(hits))

    def known_terms(self, terms: Iterable[str], ignore: Iterable[str] = ()) -> set[str]:
        """The analysed terms that some document's title or body holds, not counting the
        documents with the ids in `ignore`."""
        q = tantivy.Query
        skip = list(ignore)
        held = set()
        with self._searcher() as searcher:
            for term in set(terms):
                clauses = [
                    (tantivy.Occur.Should, q.term_query(self._schema, name, term, "freq"))
                    for name in ("body", "titletext")
                    if searcher.doc_freq(name, term)
                ]
                if not clauses:
                    continue
                if skip:
                    ids = q.term_set_query(self._schema, "id", skip)
                    clauses.append((tantivy.Occur.MustNot, ids))
                if searcher.search(q.boolean_query(clauses), 1, count=False).hits:
                    held.add(term)
        return held

    def browse(
        self,
        filters: Filters,
        sort: str | None = "created",
        reverse: bool = True,
        limit: int | None = None,
    ) -> SearchResult:
        if sort is not None:
            check_sort(sort)
        with self._searcher() as searcher:
            query = self._filter(filters) or tantivy.Query.all_query()
            size = searcher.num_docs if limit is None else limit
            if size <= 0:
                return SearchResult([], (), 0)
            if sort is None:  # in no order
                found = searcher.search(query, size)
                hits = [Hit(_doc(searcher.doc(address))) for _, address in found.hits]
                return SearchResult(hits, (), int(found.count or 0))
            order = tantivy.Order.Desc if reverse else tantivy.Order.Asc
            found = searcher.search(query, size, order_by_field=sort, order=order)
            ordered = _ties_reversed(found.hits) if reverse else found.hits
            hits = [Hit(_doc(searcher.doc(address))) for _, address in ordered]
            return SearchResult(hits, (), int(found.count or 0))

    def lookup(self, ids: Iterable[str]) -> dict[str, Doc]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        with self._searcher() as searcher:
            query = tantivy.Query.term_set_query(self._schema, "id", wanted)
            found = searcher.search(query, len(wanted), count=False)
            docs = [_doc(searcher.doc(address)) for _, address in found.hits]
        return {doc.id: doc for doc in docs}

    def size_bytes(self) -> int:
        try:
            return sum(entry.stat().st_size for entry in os.scandir(self.directory))
        except FileNotFoundError:
            return 0

    # -- queries ---------------------------------------------------------------------

    def _filter(self, filters: Filters) -> Any:
        """The query that `filters` make, or None when they let everything through."""
        q = tantivy.Query
        schema = self._schema
        parts = []

        def any_of(field: str, values: Iterable[str]) -> None:
            values = list(values)
            if len(values) == 1:
                parts.append(q.term_query(schema, field, values[0], "basic"))
            elif values:
                parts.append(q.term_set_query(schema, field, values))

        any_of("type", filters.types)
        any_of("status", filters.statuses)
        any_of("scope", filters.scopes)
        any_of("id", filters.ids)
        any_of("factkey", filters.factkeys)
        for tag in filters.tags:
            parts.append(q.term_query(schema, "tags", tag.lower(), "basic"))
        if filters.since is not None or filters.until is not None:
            kind = tantivy.FieldType.Float
            parts.append(q.range_query(schema, "time", kind, filters.since, filters.until))
        if not parts:
            return None
        if len(parts) == 1:
            return parts[0]
        return q.boolean_query([(tantivy.Occur.Must, part) for part in parts])

    def _filtered(self, query: Any, filters: Filters) -> Any:
        """`query`, restricted to the documents `filters` let through, scored alike."""
        restriction = self._filter(filters)
        if restriction is None:
            return query
        unscored = tantivy.Query.const_score_query(restriction, 0.0)
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, query), (tantivy.Occur.Must, unscored)]
        )


def _ties_reversed(hits: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Hits sorted in descending order, equal keys in descending index order, as Whoosh
    gives them (tantivy keeps equal keys in ascending index order either way)."""
    out: list[tuple[Any, Any]] = []
    start = 0
    for i in range(1, len(hits) + 1):
        if i == len(hits) or hits[i][0] != hits[start][0]:
            out.extend(reversed(hits[start:i]))
            start = i
    return out


def _whoosh_idf(total: int, n: int) -> float:
    return math.log(total / (n + 1)) + 1


def _tantivy_idf(total: int, n: int) -> float:
    # As tantivy's Bm25Weight computes it; both multiply it by the same (k1 + 1).
    return math.log(1 + (total - n + 0.5) / (n + 0.5))


_STORED = tuple(f for f in Doc._fields if f != "body")


def _fields(doc: Doc) -> dict[str, Any]:
    title = doc.title
    tagtext = " ".join(doc.tags).replace("-", " ").replace("_", " ")
    values = [getattr(doc, name) for name in _STORED]
    return {
        "id": doc.id,
        "type": doc.type,
        "status": doc.status,
        "scope": doc.scope,
        "factkey": doc.factkey,
        "tags": [tag.strip().lower() for tag in doc.tags],
        "concepts": list(doc.concepts),
        "title": title,
        "titletext": stemming.joined(title) if title_adds(title, doc.body) else "",
        "tagtext": stemming.joined(tagtext),
        "body": stemming.joined(doc.body),
        "created": doc.created,
        "time": doc.time,
        "last_accessed": doc.last_accessed,
        "importance": doc.importance,
        "stored": json.dumps(values, separators=(",", ":")).encode(),
    }


def _doc(document: Any) -> Doc:
    values = dict(zip(_STORED, json.loads(document.get_first("stored")), strict=True))
    values["tags"] = tuple(values["tags"])
    values["people"] = tuple(values["people"])
    values["concepts"] = tuple(values["concepts"])
    return Doc(body="", **values)
