"""A vault's meaning: its embedder and vector store, kept in step with the index.

The index's writers tell the store what changed (`note`, under the vault's lock: cheap,
no provider is called then); the vectors themselves are made outside the lock by `fill`,
which `reindex` runs for all (with a progress bar), the watcher after each change, and a
recall for a few before it searches. So a slow or absent provider never holds the lock
and never fails a write: a memory without a vector is still found by its words.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from kenomem.config import EmbeddingsSettings
from kenomem.embed.provider import (
    PROVIDERS,
    Embedder,
    EmbeddingsUnavailable,
    numpy_or_explain,
    prefixed_twice,
)
from kenomem.embed.store import StoreDamaged, VectorStore
from kenomem.errors import ConfigError
from kenomem.files.memory import meaning_key, text_digest

if TYPE_CHECKING:
    from kenomem.embed.provider import Vectors
    from kenomem.index import Doc

STORE_DIR = "vectors"
# Texts in one request of a fill that must not wait (a recall's, a remember's, the
# watcher's): a query's worth, so each has the deadline of a query (`http.request_timeout`).
QUICK_TEXTS = 4


def open_embedder(settings: EmbeddingsSettings) -> Embedder | None:
    """The provider the settings name; None for "none"."""
    provider = settings.provider
    if provider == "none":
        return None
    if provider == "openai":
        from kenomem.embed.http import OpenAIEmbedder

        return OpenAIEmbedder(settings)
    if provider == "fastembed":
        from kenomem.embed.local import FastEmbedder

        return FastEmbedder(settings)
    raise ConfigError(
        f"embeddings.provider must be one of {', '.join(PROVIDERS)}, not {provider!r}"
    )


class Filled(NamedTuple):
    made: int  # vectors made and kept
    left: int  # memories still without one


def keyed(docs: Iterable[Doc]) -> list[tuple[str, str]]:
    """(id, key of its text) of each document."""
    return [(d.id, d.textkey or meaning_key(d.title, d.body)) for d in docs]


Stamp = tuple[tuple[str, int, int, int], ...]  # the store's files: name, inode, size, mtime


def _stamp(directory: Path) -> Stamp:
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return ()
    found = []
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        found.append((entry.name, st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(sorted(found))


# Stores the watcher's command server holds open (`warm`), by folder and fingerprint: the
# process it forks for each call finds the matrix read, and reads it again only if its
# files changed since (a recall at 10,000 memories saves ~20 ms of opening and paging in).
_WARM: dict[tuple[Path, str], tuple[Stamp, VectorStore]] = {}


def warm(meaning: Meaning) -> None:
    """Open `meaning`'s store (again if it changed), read all of its matrix, and keep it for
    the processes this one forks (`Meaning.store` takes it). Nothing to do when the store
    is the one kept last time."""
    before = meaning._opened
    store = meaning.store()
    if before is not None and before[1] is store:
        return
    store.read_all()
    if store.dim:  # a search, so that what numpy sets up on its first use is set up here
        import numpy as np

        store.nearest(np.zeros(store.dim, np.float32), 1)
    if meaning._opened is not None:
        _WARM[(meaning.directory, meaning.embedder.fingerprint)] = meaning._opened


class Meaning:
    """Opened when a vault first needs it; the embedder loads its model on first use."""

    def __init__(self, state_dir: Path, settings: EmbeddingsSettings) -> None:
        self.settings = settings
        self.directory = state_dir / STORE_DIR
        self._embedder: Embedder | None = None
        self.warnings: list[str] = []
        self._same: dict[tuple[str, str], bool] = {}
        self._opened: tuple[Stamp, VectorStore] | None = None
        self._ahead: _Ahead | None = None

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            numpy_or_explain(self.settings.provider)
            found = open_embedder(self.settings)
            assert found is not None  # the vault opens a Meaning only for a provider
            self._embedder = found
            # Once per Meaning (per command, or per process for a server), not per call.
            twice = prefixed_twice(self.settings)
            if twice is not None:
                self.warnings.append(twice)
        return self._embedder

    def store(self) -> VectorStore:
        """The store as the disk has it now. A recall asks for it several times (is it
        complete, what is wanted, search): it is read again only when a writer, this
        process or another, changed its files since (their inode, size and mtime, taken
        before reading, so a change made meanwhile is seen at the next call)."""
        stamp = _stamp(self.directory)
        if self._opened is None:
            self._opened = _WARM.get((self.directory, self.embedder.fingerprint))
        if self._opened is not None and self._opened[0] == stamp:
            return self._opened[1]
        store = VectorStore(self.directory, self.embedder.fingerprint)
        self.warnings.extend(w for w in store.warnings if w not in self.warnings)
        self._opened = (stamp, store)
        return store

    # -- under the vault's lock --------------------------------------------------------

    def note(self, upserts: Sequence[Doc], deletes: Sequence[str]) -> None:
        if upserts or deletes:
            store = self.store()
            store.note(keyed(upserts), deletes)
            self._wrote(store)

    def replace_all(self, docs: Iterable[Doc]) -> int:
        store = self.store()
        changed = store.replace_all(dict(keyed(docs)))
        self._wrote(store)
        return changed

    def put(self, items: Iterable[tuple[str, str, Vectors]]) -> int:
        store = self.store()
        kept = store.put(items)
        self._wrote(store)
        return kept

    def _wrote(self, store: VectorStore) -> None:
        """After this process wrote through `store` (under the lock: nobody else wrote),
        it is what the disk holds: not read again for the new stamp of its own files."""
        self._opened = (_stamp(self.directory), store)

    # -- outside it --------------------------------------------------------------------

    def fill(
        self,
        texts: Callable[[list[str]], dict[str, str]],
        lock: Callable[[], AbstractContextManager[Any]],
        limit: int | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> Filled:
        """Make the vectors the store wants (at most `limit`), in batches: each batch
        embedded outside the lock, then kept under it. `texts` gives the text of each
        memory as its file says now (`memory.meaning_text`). `EmbeddingsUnavailable` when the
        provider fails; what was kept before stays.

        With a `limit` (a few, for a caller that must not wait: a recall, a remember, the
        watcher), a server is sent a query's worth of texts at a time, each request with a
        query's deadline, and none is begun once `timeout_seconds` have passed: however
        many vectors are wanted, a server that does not answer costs such a caller one
        deadline, and a slow one at most two. `reindex` (no limit) sends whole batches,
        each with the time of its size."""
        wanted = self.store().pending()
        todo = wanted if limit is None else wanted[:limit]
        made = 0
        quick = limit is not None and getattr(self.embedder, "remote", False)
        step = QUICK_TEXTS if quick else max(1, self.settings.batch_size) * 4
        until = time.monotonic() + self.settings.timeout_seconds
        for start in range(0, len(todo), step):
            if quick and start and time.monotonic() >= until:
                break
            chunk = todo[start : start + step]
            now = texts([mem_id for mem_id, _ in chunk])
            items = []
            for mem_id, key in chunk:
                text = now.get(mem_id)
                if text is not None and text_digest(text) == key:  # else: changed since
                    items.append((mem_id, key, text))
            if items:
                vectors = self.embedder.documents([text for _, _, text in items])
                with lock():
                    store = self.store()
                    if store.dim and vectors.shape[1] != store.dim:
                        raise EmbeddingsUnavailable(
                            f"the model now gives vectors of {vectors.shape[1]} numbers where "
                            f"the store's have {store.dim}: `kenomem reindex` makes them again"
                        )
                    made += store.put(
                        (mem_id, key, vectors[n]) for n, (mem_id, key, _) in enumerate(items)
                    )
                    self._wrote(store)
            if progress is not None:
                progress(len(chunk))
        return Filled(made, max(0, len(wanted) - made))

    def says_the_same(self, old: str, new: str, paraphrase_cosine: float) -> bool:
        """Whether `new` says what `old` says, in other words (`likeness.judge`); each
        pair is embedded once. `EmbeddingsUnavailable` if the provider fails."""
        pair = (old, new)
        if pair not in self._same:
            from kenomem.embed.likeness import judge

            a, b = self.embedder.documents([old, new])
            cosine = float(a @ b)
            self._same[pair] = (
                judge(old, new, cosine, paraphrase_cosine, paraphrase_cosine) == "same"
            )
        return self._same[pair]

    def same_model(self, lock: Callable[[], AbstractContextManager[Any]]) -> bool:
        """Whether the store's vectors are of the length the provider gives now; if not
        (a server that changed its model under the same name), they are dropped."""
        store = self.store()
        if not store.dim:
            return True
        probe = self.embedder.query("kenomem")
        if probe.shape == (store.dim,):
            return True
        with lock():
            self.store().clear()
        return False

    def ask_ahead(self, query: str) -> None:
        """Start embedding `query` in a thread when the provider is a server, so that the
        wait for its answer overlaps the keyword search; `search` collects it. A provider
        in this process (fastembed) is asked by `search` itself: on two cores it would
        only compete with the keyword search for them."""
        try:
            embedder = self.embedder
        except Exception:  # `search` meets the same error and reports it
            return
        if getattr(embedder, "remote", False):
            self._ahead = _Ahead(embedder, query)

    def search(
        self, query: str, limit: int, wanted: Iterable[str] = ()
    ) -> tuple[list[tuple[str, float]], float, dict[str, float]]:
        """(id, cosine) of the memories nearest in meaning to `query`, the median cosine
        of the query with all of them, and the cosine of each `wanted` memory
        (`VectorStore.nearest`)."""
        ahead, self._ahead = self._ahead, None
        store = self.store()
        if not store.dim:
            return [], 0.0, {}
        vector = ahead.vector() if ahead and ahead.text == query else self.embedder.query(query)
        if vector.shape != (store.dim,):
            raise EmbeddingsUnavailable(
                f"the model now gives vectors of {vector.shape[-1]} numbers where the store's "
                f"have {store.dim}: `kenomem reindex` makes them again"
            )
        try:
            return store.nearest(vector, limit, wanted)
        except StoreDamaged as exc:
            raise EmbeddingsUnavailable(str(exc)) from None


class _Ahead:
    """A query's embedding, asked of the provider in a thread of its own."""

    def __init__(self, embedder: Embedder, text: str) -> None:
        self.text = text
        self._embedder = embedder
        self._vector: Vectors | None = None
        self._error: Exception | None = None
        self._thread = threading.Thread(target=self._run, name="kenomem-query", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._vector = self._embedder.query(self.text)
        except Exception as exc:  # raised again where the caller waits
            self._error = exc

    def vector(self) -> Vectors:
        """The embedding, once the provider has answered (or its error, raised here)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._vector is not None
        return self._vector
