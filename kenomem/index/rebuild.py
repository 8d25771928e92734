"""A rebuild: every file read again, into a fresh index swapped in at the end.

Reading a file, parsing its frontmatter and making the engine's document of it is Python
work, and it costs more than the engine's own indexing. An engine that indexes in one
process of its own (tantivy: its writer runs in threads) gets that work shared among
worker processes: from `PARALLEL_FROM` files on, on Linux (where a worker is a fork, not
a new interpreter), chunks of paths go to a pool, in order, and the parent only hands the
documents to the writer and keeps the records. Whoosh's bulk writer analyses in processes
of its own (whoosh_engine.py), so its files are read here, in one process.

Either way each file gives the same record, error and document: a worker runs the very
`load_file` the serial path runs, and the ids are claimed in the parent, in path order.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

from kenomem.errors import IndexCorrupt
from kenomem.files import memory as memory_mod
from kenomem.files import paths
from kenomem.files.ignore import Matcher
from kenomem.files.lock import VaultLock
from kenomem.files.scan import Stat, scan
from kenomem.index import SCHEMA_VERSION, Doc, Engine, Progress, drop_other_engines, leftovers
from kenomem.index import state as state_mod
from kenomem.index.state import FileRecord, State
from kenomem.index.sync import (
    Loaded,
    SyncReport,
    fixed_id,
    ignored_file,
    load_file,
    mark_racy,
    nothing_ignored,
    reportable,
    to_doc,
)

# A rebuild of at least this many files is read by worker processes.
PARALLEL_FROM = 2000
_CHUNK = 250  # paths a worker reads per task: few messages, an even share at the end

Prepare = Callable[[Doc], Any]
Read = tuple[Loaded, Any]  # a file's record, and its prepared document (None if none)


def workers() -> int:
    """Worker processes for reading the files: one per core, at most four; none where
    processes cannot be forked."""
    if not sys.platform.startswith("linux"):
        return 0  # elsewhere a worker starts a new interpreter: not worth it
    cores = os.cpu_count() or 1
    return min(4, cores) if cores > 1 else 0


def rebuild(
    root: Path,
    engine: Engine,
    lock: VaultLock,
    ignore_rules: str,
    read_options: dict[str, Any],
    progress: Progress | None = None,
) -> tuple[State, SyncReport, bool]:
    """Index every file of the vault at `root` again, from nothing, into `engine`, and
    save a fresh state: the state, the report, and whether there was an index with
    memories before. `ignore_rules` are the vault's as read now (they may be why it
    rebuilds); `read_options` go to the reader (`sync.load_file`)."""
    state_dir = paths.state_dir(root)
    with lock:
        leftovers.clean(root)  # what killed runs left: a rebuild starts clean
        old_state = state_mod.load(state_dir)
        previous = ids_by_path(old_state)
        seen = scan(root)
        fresh = State(schema=SCHEMA_VERSION, engine=engine.name)
        fresh.ignore_rules = ignore_rules
        now_ns = time.time_ns()
        items: list[Loaded] = []
        reader = Reader(root, seen.files, previous, engine.prepare, **read_options)
        procs = workers() if engine.prepares_apart else 0
        read = reader.parallel(procs, lock.fd)

        def docs() -> Iterator[Any]:
            used: dict[str, str] = {}
            for item, doc in read:
                items.append(item)
                if doc is not None:
                    mem_id = item.record.id
                    if mem_id in used:
                        item.record.id = ""
                        item.record.error = f"duplicate id {mem_id} (also in {used[mem_id]})"
                    else:
                        used[mem_id] = item.path
                        yield doc
                if progress is not None:
                    progress(len(items))

        try:
            count = engine.rebuild(docs())
        finally:
            read.close()  # ends the workers, should the engine have stopped early
        drop_other_engines(state_dir / "index", engine.name)
        for item in items:
            fresh.put(item.path, item.record)
        mark_racy(fresh, items, now_ns)
        if old_state is not None:
            # Accesses of plain notes live only here: a rebuild must not forget them.
            fresh.access.update(
                (path, access) for path, access in old_state.access.items() if path in fresh
            )
        state_mod.save(state_dir, fresh, fsync=False)
    report = SyncReport(rebuilt=True, indexed=count, added=count)
    report.errors = reportable({**fresh.errors, **seen.problems})
    return fresh, report, bool(previous)


class Reader:
    """Reads the files of a rebuild. Files that had an id before come first, so that a
    copy made since is the duplicate; the ids of files without one are kept from
    `previous_ids` (or derived from the path)."""

    def __init__(
        self,
        root: Path,
        seen: dict[str, Stat],
        previous_ids: dict[str, str],
        prepare: Prepare,
        *,
        default_importance: int,
        ignored: Matcher = nothing_ignored,
    ) -> None:
        self.root = root
        self.seen = seen
        self.previous_ids = previous_ids
        self.prepare = prepare
        self.default_importance = default_importance
        self.ignored = ignored
        self.paths = sorted(seen, key=lambda p: (p not in previous_ids, p))

    def one(self, path: str) -> Read | None:
        """A file's record (its memory left out: not needed, and heavy to keep or send)
        and the engine's document of it; None if the file vanished."""
        stat = self.seen.get(path)
        if self.ignored(path):
            return ignored_file(path, stat), None
        kept = self.previous_ids.get(path) or memory_mod.derived_id(path)
        item = load_file(self.root, path, stat, fixed_id(kept), self.default_importance)
        if item is None:
            return None
        mem, item.memory = item.memory, None
        return item, (None if mem is None else self.prepare(to_doc(mem, item.record.digest or "")))

    def chunk(self, paths: list[str]) -> list[Read]:
        return [read for read in map(self.one, paths) if read is not None]

    def serial(self) -> Generator[Read, None, None]:
        for path in self.paths:
            read = self.one(path)
            if read is not None:
                yield read

    def parallel(self, procs: int, lock_fd: int | None = None) -> Generator[Read, None, None]:
        """The same as `serial`, read by `procs` forked workers (when there are at least
        PARALLEL_FROM files); `lock_fd` is closed in each, so that a worker left behind by
        a killed parent cannot keep holding the vault lock."""
        if len(self.paths) < PARALLEL_FROM or procs < 1:
            yield from self.serial()
            return
        import multiprocessing

        global _READER, _LOCK_FD
        chunks = [self.paths[i : i + _CHUNK] for i in range(0, len(self.paths), _CHUNK)]
        _READER, _LOCK_FD = self, lock_fd
        sys.stdout.flush()  # a fork copies what is buffered; a worker would write it again
        sys.stderr.flush()
        try:
            pool = multiprocessing.get_context("fork").Pool(procs, _init_worker)
            try:
                for rows in pool.imap(_read_chunk, chunks):
                    for path, record, doc in rows:
                        yield Loaded(path, FileRecord(*record), None), doc
            finally:
                pool.terminate()
                pool.join()
        finally:
            _READER = _LOCK_FD = None


# The job of the forked workers: set in the parent just before the fork, inherited.
_READER: Reader | None = None
_LOCK_FD: int | None = None


def _init_worker() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if _LOCK_FD is not None:
        try:
            os.close(_LOCK_FD)  # this copy only: the parent keeps its lock
        except OSError:
            pass


def _read_chunk(paths: list[str]) -> list[tuple[str, list[Any], Any]]:
    """What a worker sends back: plain rows, which pickle in half the time of objects."""
    assert _READER is not None
    return [(item.path, list(item.record.to_row()), doc) for item, doc in _READER.chunk(paths)]


def ids_by_path(state: State | None) -> dict[str, str]:
    """path -> id from a previous state, so that rebuilding keeps derived ids; {} if none."""
    if state is None:
        return {}
    try:
        return {path: mem_id for mem_id, path in state.ids().items()}
    except IndexCorrupt:
        return {}
