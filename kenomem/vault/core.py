"""An opened vault: its folder, settings, lock, state and index, kept in step.

Every command that reads memories syncs first: `begin_sync()` starts a scan (a stat of
each memory file, in a child process where possible) and the command may search the
index meanwhile; `finish()` compares the scan with the saved stats. Only when something
changed does it take the lock, read the changed files and write one index batch, and the
command then searches again. A missing, outdated or corrupt index, or a damaged state,
is rebuilt from the files with a warning.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from kenomem.config import Settings, load_settings
from kenomem.errors import AmbiguousId, IndexCorrupt, MemoryNotFound
from kenomem.files import ignore
from kenomem.files.lock import VaultLock
from kenomem.files.memory import Memory
from kenomem.files.paths import require_vault, state_dir
from kenomem.files.plural import counted
from kenomem.files.scan import OUTSIDE, Stat, outside, scan
from kenomem.files.store import Written
from kenomem.index import (
    SCHEMA_VERSION,
    Boosts,
    Engine,
    Filters,
    Progress,
    SearchResult,
    SyncBatch,
    heartbeat,
    open_engine,
)
from kenomem.index import state as state_mod
from kenomem.index.state import FileRecord, State
from kenomem.index.sync import (
    SyncReport,
    apply_changes,
    fixed_id,
    load_file,
    mark_racy,
    plan_sync,
    read_changes,
    reportable,
    to_doc,
)

T = TypeVar("T")

LAGGING = "the index could not be updated: searches may miss the latest changes until it can be"

if TYPE_CHECKING:
    from kenomem.embed.keep import Meaning
    from kenomem.index import Doc
    from kenomem.index.scanjob import ScanJob


class PendingSync:
    """A sync whose scan may still be running (see `Vault.begin_sync`)."""

    def __init__(
        self, vault: CoreVault, state: State, job: ScanJob | None, shared: bool = False
    ) -> None:
        self.vault = vault
        self.state = state
        # None: no scan needed, the index was just rebuilt or a live watcher vouches for it
        self.job = job
        self.shared = shared  # inside `Vault.sync_once`: the block's sync stands

    def finish(self, progress: Progress | None = None) -> SyncReport:
        vault = self.vault
        state = self.state
        if self.shared and vault.last_sync is not None:
            return vault.last_sync
        if self.job is None:
            if vault.last_sync is None or not vault.last_sync.rebuilt:
                vault.last_sync = SyncReport()
                vault.last_sync.errors = reportable(state.errors)
            return vault.last_sync
        try:
            changed, problems = self.job.outcome()
        except IndexCorrupt as exc:
            return vault.rebuild(progress, reason=str(exc))
        if changed:
            report = vault._apply_changes(progress)
            # Another process (a watcher) may have indexed the change first: either way the
            # index moved since the search that ran beside the scan.
            report.index_moved = True
        else:
            report = SyncReport()
            report.errors = reportable({**state.errors, **problems})
        vault.last_sync = report
        return report


class CoreVault:
    def __init__(self, root: Path, settings: Settings, warnings: list[str] | None = None) -> None:
        self.root = root
        self.settings = settings
        self.warnings: list[str] = warnings if warnings is not None else []
        self.last_sync: SyncReport | None = None
        self._engine: Engine | None = None
        self._state: State | None = None
        self._lock: VaultLock | None = None
        self._ignore_rules: str | None = None
        # False in the watcher itself: it must never skip a scan on its own word.
        self.trust_watcher = True
        # Whether an index update the disk refuses (full, read-only) leaves the index as it
        # is, with a warning, rather than failing the command: the memory files are the
        # truth and the next sync catches up. False in the watcher, which retries instead.
        self.index_may_lag = True
        self._sync_shared = False
        self._meaning: Meaning | None = None

    @classmethod
    def open(cls, root: Path) -> CoreVault:
        require_vault(root)
        settings = load_settings(root)
        return cls(root, settings, warnings=list(settings.warnings))

    # -- derived state ---------------------------------------------------------------

    @property
    def state_dir(self) -> Path:
        return state_dir(self.root)

    @property
    def lock(self) -> VaultLock:
        if self._lock is None:
            self._lock = VaultLock(self.state_dir, self.settings.write.lock_timeout_seconds)
        return self._lock

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = open_engine(
                self.settings.index.engine,
                self.state_dir / "index",
                self.settings.write.lock_timeout_seconds,
            )
        return self._engine

    @property
    def state(self) -> State:
        if self._state is None:
            raise RuntimeError("sync() first")
        return self._state

    @property
    def ignore_rules(self) -> str:
        if self._ignore_rules is None:
            self._ignore_rules = ignore.rules(self.root)
        return self._ignore_rules

    def reread_ignore_rules(self) -> None:
        self._ignore_rules = None

    def _unusable(self, state: State | None) -> str:
        """Why the saved state and index cannot be used as they are ("" when they can)."""
        if state is not None and state.engine != self.engine.name:
            return f"the engine changed to {self.engine.name}"
        if state is None or state.schema != SCHEMA_VERSION or not self.engine.exists():
            return "the index is missing or from another version"
        if state.ignore_rules != self.ignore_rules:
            return "the vault's .gitignore changed"
        return ""

    def read_options(self) -> dict[str, Any]:
        return {
            "default_importance": self.settings.memory.default_importance,
            "ignored": ignore.matcher(self.ignore_rules),
        }

    def sync(self, progress: Progress | None = None) -> SyncReport:
        """Bring the index in step with the files; rebuild it if it cannot be trusted."""
        return self.begin_sync().finish(progress)

    def begin_sync(self) -> PendingSync:
        """Start a sync: the index can be searched while the files are being scanned.

        If `finish()` then reports changes, a search made meanwhile must be run again.
        """
        from kenomem.index import scanjob

        if self._sync_shared and self.last_sync is not None:
            return PendingSync(self, self.state, None, shared=True)
        loaded = state_mod.load(self.state_dir)
        if self._unusable(loaded):
            with self.lock:
                # Processes that start together on a new vault: the first one builds.
                loaded = state_mod.load(self.state_dir)
                reason = self._unusable(loaded)
                if reason:
                    self.rebuild(reason=reason)
                    return PendingSync(self, self.state, None)
        assert loaded is not None
        self._state = loaded
        self.last_sync = None
        if self.trust_watcher and heartbeat.trusted(self.state_dir):
            return PendingSync(self, loaded, None)  # the watcher has seen every change
        return PendingSync(self, loaded, scanjob.start(self.root, loaded))

    @contextmanager
    def sync_once(self) -> Iterator[SyncReport]:
        """One scan for the block: steps of one operation that each sync share the first
        (kenomem's own writes in the block are recorded in the state as they are made)."""
        if self._sync_shared:
            yield self.sync()
            return
        report = self.sync()
        self._sync_shared = True
        try:
            yield report
        finally:
            self._sync_shared = False

    def _apply_changes(self, progress: Progress | None) -> SyncReport:
        with self.lock:
            # Another process may have applied the same changes while we waited.
            current = state_mod.load(self.state_dir)
            reason = self._unusable(current)
            if reason:
                return self.rebuild(progress, reason=reason)
            assert current is not None
            seen = scan(self.root)
            return self._settle(
                current, current.stats, seen.files, current.unverified, seen.problems, progress
            )

    def _settle(
        self,
        current: State,
        known: dict[str, Stat],
        seen: dict[str, Stat],
        unverified: set[str],
        problems: dict[str, str],
        progress: Progress | None = None,
    ) -> SyncReport:
        """Index what differs between the `known` and the `seen` stats; save the state.

        The caller holds the lock; a damaged index or state means a rebuild.
        """
        try:
            plan = plan_sync(known, seen, unverified)
            if not plan:
                report = SyncReport()
            else:
                loaded_files = read_changes(self.root, current, plan, seen, **self.read_options())
                before = {item.path: current.get(item.path) for item in loaded_files}
                racy_before = set(current.unverified)
                batch, report = apply_changes(current, plan, loaded_files)
                mark_racy(current, loaded_files, time.time_ns())
                self.engine.apply(batch)
                self.note_meaning(batch.upserts, batch.deletes)
                if (
                    batch
                    or plan.gone
                    or current.unverified != racy_before  # verified now: not to re-read
                    or any(current.get(p) != r for p, r in before.items())
                ):
                    state_mod.save(self.state_dir, current, fsync=False)
            report.indexed = len(current)
        except IndexCorrupt as exc:
            return self.rebuild(progress, reason=str(exc))
        except OSError as exc:
            if not self.lag(exc):
                raise
            # What the disk holds, which the index matches; the changes wait for a sync.
            current = state_mod.load(self.state_dir) or current
            report = SyncReport()
            report.indexed = len(current)
        self._state = current
        report.errors = reportable({**current.errors, **problems})
        self.last_sync = report
        return report

    def rebuild(self, progress: Progress | None = None, reason: str = "") -> SyncReport:
        """Index every file again, from nothing, into a fresh index swapped in at the end."""
        from kenomem.index.rebuild import rebuild

        with self.lock:
            self.reread_ignore_rules()  # they may be why it rebuilds
            self._state, report, had_index = rebuild(
                self.root,
                self.engine,
                self.lock,
                self.ignore_rules,
                self.read_options(),
                progress,
            )
            if self.meaning is not None:
                self._meaning_in_step()
        self.last_sync = report
        if reason and had_index:
            self.warnings.append(f"rebuilt the index: {reason}")
        return report

    # -- meaning: the vectors kept beside the index (embed/) -------------------------

    @property
    def meaning(self) -> Meaning | None:
        """The embedder and vector store; None when recall is by keywords alone."""
        if self.settings.embeddings.provider == "none":
            return None
        if self._meaning is None:
            from kenomem.embed.keep import Meaning

            self._meaning = Meaning(self.state_dir, self.settings.embeddings)
        return self._meaning

    def note_meaning(self, upserts: list[Doc], deletes: list[str]) -> None:
        """Tell the vector store what an index batch changed (the caller holds the lock).
        It never fails the write: the vectors are derived, and made again when they can."""
        if self.meaning is None or not (upserts or deletes):
            return
        self._meaning_guarded(lambda meaning: meaning.note(upserts, deletes))

    def meaning_ready(self) -> None:
        """Make sure the vector store knows every memory (it wants a vector for each one
        it has none of): once, the first time meaning is used, or after a model change."""
        meaning = self.meaning
        if meaning is None or meaning.store().complete:
            return
        with self.lock:
            if not meaning.store().complete:
                self._meaning_in_step()

    def embed_wanted(self, limit: int | None = None) -> int:
        """Make (at most `limit` of) the vectors the store wants, outside the lock but for
        keeping them; a provider that fails costs a warning. How many are left wanting."""
        meaning = self.meaning
        if meaning is None:
            return 0
        from kenomem.embed.provider import EmbeddingsUnavailable
        from kenomem.embed.store import StoreDamaged

        left = 0
        try:
            self.meaning_ready()
            left = meaning.fill(self.meaning_texts, lambda: self.lock, limit).left
        except (EmbeddingsUnavailable, StoreDamaged) as exc:
            self._warn_once(f"no vector was made now ({exc}); the next recall tries again")
        except OSError as exc:
            self._warn_once(f"the vector store could not be updated: {exc}")
        for warning in meaning.warnings:
            self._warn_once(warning)
        meaning.warnings.clear()
        return left

    def keep_vectors(self, items: list[tuple[str, str, Any]]) -> None:
        """Keep vectors made already, each (id, key of its text, vector); the caller holds
        the lock."""
        if self.meaning is not None:
            self._meaning_guarded(lambda meaning: meaning.put(items))

    def lookup(self, ids: Iterable[str]) -> dict[str, Doc]:
        return self._guarded(lambda: self.engine.lookup(ids))

    def meaning_texts(self, ids: list[str]) -> dict[str, str]:
        """id -> the text each memory is embedded as, read from its file now (the index
        keeps no bodies); a memory gone or unreadable is left out."""
        from kenomem.files import store
        from kenomem.files.memory import meaning_text

        texts = {}
        for mem_id, doc in self.lookup(ids).items():
            body = store.read_body(self.root, doc.path)
            if body is not None:
                texts[mem_id] = meaning_text(doc.title, body)
        return texts

    def _meaning_in_step(self) -> None:
        """The vector store in step with every memory of the index: after a rebuild, or
        the first time it is used."""
        docs = self.engine.browse(Filters(statuses=()), "created", False, None).hits
        self._meaning_guarded(lambda meaning: meaning.replace_all(hit.doc for hit in docs))

    def _meaning_guarded(self, action: Callable[[Meaning], object]) -> None:
        from kenomem.embed.provider import EmbeddingsUnavailable
        from kenomem.embed.store import StoreDamaged
        from kenomem.errors import ConfigError

        meaning = self.meaning
        assert meaning is not None
        try:
            action(meaning)
        except (EmbeddingsUnavailable, ConfigError, StoreDamaged) as exc:
            self._warn_once(f"recall by meaning is off: {exc}")
        except OSError as exc:
            self._warn_once(f"the vector store could not be updated: {exc}")
        for warning in meaning.warnings:
            self._warn_once(warning)
        meaning.warnings.clear()

    def _warn_once(self, warning: str) -> None:
        if warning not in self.warnings:
            self.warnings.append(warning)

    def refresh(self, paths: list[str]) -> SyncReport:
        """Index these paths now, without a scan: files this process just wrote or moved.

        The caller holds the lock and has synced.
        """
        return self._settle_paths(self.state, paths)

    def sync_paths(self, paths: list[str], *, verify: bool = False) -> SyncReport:
        """Bring just these paths in step (the watcher's batches): stat them, compare with
        the saved state, read what changed (with `verify`, compare the contents even when
        the stat is the same). Takes the lock; rebuilds if it must."""
        with self.lock:
            current = state_mod.load(self.state_dir)
            reason = self._unusable(current)
            if reason:
                return self.rebuild(reason=reason)
            assert current is not None
            return self._settle_paths(current, paths, verify)

    def _settle_paths(self, current: State, paths: list[str], verify: bool = False) -> SyncReport:
        seen = {}
        problems = {}
        for path in paths:
            if outside(self.root, path):  # as the scan: a symlink that leaves is not there
                problems[path] = OUTSIDE
                continue
            try:
                st = os.stat(self.root / path)
            except (FileNotFoundError, NotADirectoryError):
                continue
            seen[path] = (st.st_size, st.st_mtime_ns)
        try:
            known = {path: current.stats[path] for path in paths if path in current}
        except IndexCorrupt as exc:
            return self.rebuild(reason=str(exc))
        return self._settle(current, known, seen, set(paths) if verify else set(), problems)

    def index_new(self, mem: Memory, path: str, stat: tuple[int, int], digest: str) -> None:
        """Index a memory file this process just created from `mem`, without reading it back.

        The caller holds the lock and has synced.
        """
        self.index_new_many([(mem, Written(path, stat[0], stat[1], digest))])

    def index_new_many(self, written: list[tuple[Memory, Written]]) -> None:
        """`index_new` for many files, in one index batch."""
        if not written:
            return
        batch = SyncBatch()
        batch.upserts.extend(to_doc(mem._replace(path=w.path), w.digest) for mem, w in written)
        try:
            self.engine.apply(batch)
            self.note_meaning(batch.upserts, batch.deletes)
            records = [
                (w.path, FileRecord(w.size, w.mtime_ns, w.digest, mem.id)) for mem, w in written
            ]
            state_mod.record_writes(self.state_dir, self.state, records)
        except IndexCorrupt as exc:
            self.rebuild(reason=str(exc))  # reads the new files with all the others
        except OSError as exc:
            # The files are written: a memory written is remembered. Unknown to the saved
            # state, they are read by the next sync, as any file written behind its back.
            if not self.lag(exc):
                raise

    def lag(self, exc: OSError, what: str = LAGGING) -> bool:
        """Whether to go on without a write of derived state that the disk refused (full,
        read-only, not allowed); if so, warn once of `what` and why."""
        from kenomem.errors import cannot_write, storage_error

        if not (self.index_may_lag and cannot_write(exc)):
            return False
        refused = storage_error(exc, self.state_dir)
        assert refused is not None
        if not any(w.startswith(what) for w in self.warnings):
            self.warnings.append(f"{what} ({refused.message})")
        return True

    # -- the index and the state, rebuilt when they cannot be read ------------------

    def _guarded(self, action: Callable[[], T]) -> T:
        try:
            return action()
        except IndexCorrupt as exc:
            self.rebuild(reason=str(exc))
            return action()

    def search(self, text: str, filters: Filters, boosts: Boosts, limit: int) -> SearchResult:
        return self._guarded(lambda: self.engine.search(text, filters, boosts, limit))

    def doc_frequencies(
        self, terms: Iterable[str], field: str = "body"
    ) -> tuple[dict[str, int], int]:
        return self._guarded(lambda: self.engine.doc_frequencies(terms, field))

    def related(self, concepts: Iterable[str], filters: Filters, limit: int) -> SearchResult:
        return self._guarded(lambda: self.engine.related(concepts, filters, limit))

    def near(self, text: str, filters: Filters, share: float, limit: int) -> SearchResult:
        return self._guarded(lambda: self.engine.near(text, filters, share, limit))

    def browse(
        self,
        filters: Filters,
        sort: str | None = "created",
        reverse: bool = True,
        limit: int | None = None,
    ) -> SearchResult:
        return self._guarded(lambda: self.engine.browse(filters, sort, reverse, limit))

    def ids(self) -> dict[str, str]:
        """id -> path of every memory that could be read."""
        return self._guarded(lambda: self.state.ids())

    def record(self, path: str) -> FileRecord | None:
        return self._guarded(lambda: self.state.get(path))

    # -- finding memories ------------------------------------------------------------

    def resolve_id(self, prefix: str) -> tuple[str, str]:
        """(id, path) of the one memory whose id starts with `prefix` (`mem_` optional)."""
        ids = self.ids()
        wanted = prefix.strip()
        if wanted in ids:
            return wanted, ids[wanted]
        matches = sorted(
            i
            for i in ids
            if i.startswith(wanted) or (i.startswith("mem_") and i[4:].startswith(wanted))
        )
        if len(matches) == 1:
            return matches[0], ids[matches[0]]
        if not matches:
            from kenomem.vault.suggest import not_found

            raise not_found(wanted, ids)  # "did you mean" the closest ids and titles
        shown = ", ".join(matches[:5]) + (" ..." if len(matches) > 5 else "")
        raise AmbiguousId(
            f"{wanted!r} matches {counted(len(matches), 'memory')}: {shown}",
            hint="give more characters of the id",
        )

    def load(self, path: str) -> Memory:
        """The memory stored at a vault-relative path, read from the file."""
        record = self.record(path)
        item = load_file(
            self.root,
            path,
            None,
            fixed_id(record.id if record else ""),
            self.settings.memory.default_importance,
        )
        if item is None or item.memory is None:
            why = item.record.error if item is not None else "the file is gone"
            raise MemoryNotFound(f"cannot read {path}: {why}")
        return item.memory
