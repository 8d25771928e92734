"""Keep the index true to the files, with or without a watcher.

`scan` stats every memory file; `plan_sync` (pure) compares that with the state and says
which paths are new, changed or gone; `read_changes` reads only those, by size and mtime
first and by content digest second, and `apply_changes` writes one index batch. A move is
the same content at a new path; a file that cannot be read is reported and skipped, never
rewritten.
"""

import os
import stat as stat_module
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

from kenomem.errors import FrontmatterError
from kenomem.files import memory as memory_mod
from kenomem.files.fm import parse_time
from kenomem.files.ignore import IGNORED, Matcher
from kenomem.files.memory import Memory
from kenomem.files.scan import OUTSIDE, RACY_NS, Stat, digest_of, outside
from kenomem.index import Doc, SyncBatch
from kenomem.index.state import FileRecord, State

# Larger files are not memories (a log dump, a binary); they are reported and skipped.
MAX_FILE_BYTES = 5 * 1024 * 1024


def nothing_ignored(_path: str) -> bool:
    return False


def reportable(errors: dict[str, str]) -> dict[str, str]:
    """The errors worth a warning: files ignored on purpose are not."""
    return {path: why for path, why in errors.items() if why != IGNORED}


class SyncPlan(NamedTuple):
    new: tuple[str, ...]
    changed: tuple[str, ...]
    gone: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.new or self.changed or self.gone)


def plan_sync(
    known: dict[str, Stat], seen: dict[str, Stat], unverified: Iterable[str] = ()
) -> SyncPlan:
    """Which paths need reading: a pure comparison of (size, mtime) stats.

    `unverified` paths are read again even when their stat did not change.
    """
    recheck = {path for path in unverified if path in seen and path in known}
    if known == seen and not recheck:  # the common case, decided at C speed
        return SyncPlan((), (), ())
    differ = {path for path, _ in seen.items() - known.items()} | recheck
    new = sorted(p for p in differ if p not in known)
    changed = sorted(p for p in differ if p in known)
    gone = sorted(known.keys() - seen.keys())
    return SyncPlan(tuple(new), tuple(changed), tuple(gone))


class SyncReport:
    """What a sync did; filled in as it goes."""

    __slots__ = (
        "added",
        "errors",
        "index_moved",
        "indexed",
        "moved",
        "paths",
        "rebuilt",
        "removed",
        "updated",
    )

    def __init__(self, *, rebuilt: bool = False, indexed: int = 0, added: int = 0) -> None:
        self.added = added
        self.updated = 0
        self.removed = 0
        self.moved = 0
        self.errors: dict[str, str] = {}  # path -> why it is skipped
        self.rebuilt = rebuilt
        self.indexed = indexed
        self.index_moved = rebuilt  # the index may differ from before this sync began
        self.paths: list[str] = []  # the files indexed, moved or removed

    @property
    def stale(self) -> bool:
        """Whether a search made while this sync ran must be made again."""
        return self.changed or self.index_moved

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed or self.moved)


class Loaded:
    """A file read from disk: its record, and the memory when it could be parsed."""

    __slots__ = ("memory", "path", "record")

    def __init__(self, path: str, record: FileRecord, memory: Memory | None) -> None:
        self.path = path
        self.record = record
        self.memory = memory


def mark_racy(state: State, loaded: list[Loaded], now_ns: int) -> None:
    """Remember which of the files just read changed too recently to trust their stat."""
    for item in loaded:
        if item.record.mtime_ns >= now_ns - RACY_NS:
            state.unverified.add(item.path)
        else:
            state.unverified.discard(item.path)


def fixed_id(mem_id: str) -> Callable[[str], str]:
    """An `id_for` for `load_file` that gives one id whatever the content."""

    def id_for(_digest: str) -> str:
        return mem_id

    return id_for


def load_file(
    root: Path,
    path: str,
    stat: Stat | None,
    id_for: Callable[[str], str],
    default_importance: int,
    known: FileRecord | None = None,
) -> Loaded | None:
    """Read and parse one file; None if it vanished. Never raises for bad content, and
    never reads a file that leads out of the vault (it gets an error record instead).

    `id_for(digest)` gives the id of a file that has none in its frontmatter, and
    `default_importance` (the vault's `[memory]` setting) the importance of one that
    says none. When the bytes are those of `known` (a `touch`, a checkout of the same
    content), the file is not parsed again: only its stat moved, and the result carries
    no memory.
    """
    if outside(root, path):  # the scan passes these over; the watcher's paths and ids come here
        # Recorded with no stat: a folder on the way that was a link only for a moment
        # (swapped back since) leaves the file to be read again by the next sync.
        return Loaded(path, FileRecord(0, 0, "", "", OUTSIDE), None)
    full = os.path.join(root, path)  # not `root / path`: a Path costs more than the read
    try:
        # Non-blocking, so that a pipe that took a file's place cannot hang the open.
        fd = os.open(full, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(fd, "rb") as handle:
            st = os.fstat(fd)
            why = ""
            if not stat_module.S_ISREG(st.st_mode):
                why = "not a regular file"
            elif st.st_size > MAX_FILE_BYTES:
                why = f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB"
            if why:
                return Loaded(path, FileRecord(st.st_size, st.st_mtime_ns, "", "", why), None)
            data = handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        size, mtime_ns = stat or (0, 0)
        return Loaded(
            path, FileRecord(size, mtime_ns, "", "", f"cannot read: {exc.strerror}"), None
        )
    digest = digest_of(data)
    if known is not None and known.digest == digest and known.id and not known.error:
        unchanged = FileRecord(
            st.st_size,
            st.st_mtime_ns,
            digest,
            known.id,
            "",
            known.last_accessed,
            known.access_count,
        )
        return Loaded(path, unchanged, None)
    record = FileRecord(st.st_size, st.st_mtime_ns, digest, "")
    if b"\x00" in data:
        record.error = "binary file (contains NUL bytes)"
        return Loaded(path, record, None)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        record.error = f"line {line}: not UTF-8 text"
        return Loaded(path, record, None)
    try:
        mem = memory_mod.from_text(
            path,
            text,
            mtime=st.st_mtime_ns / 1e9,
            fallback_id=id_for(digest),
            default_importance=default_importance,
        )
    except FrontmatterError as exc:
        record.error = f"line {exc.line}: {exc.reason}" if exc.line else exc.reason
        return Loaded(path, record, None)
    record.id = mem.id
    return Loaded(path, record, mem)


def read_changes(
    root: Path,
    state: State,
    plan: SyncPlan,
    seen: dict[str, Stat],
    *,
    default_importance: int,
    ignored: Matcher = nothing_ignored,
) -> list[Loaded]:
    """Read the new and changed files; a changed file whose digest is unchanged is not parsed."""
    gone_ids_by_digest = {}
    for path in plan.gone:
        old = state.get(path)
        if old is not None and old.id:
            gone_ids_by_digest[old.digest] = old.id
    loaded: list[Loaded] = []
    # Known paths first: a memory that was already here keeps its id against a newcomer.
    for path in (*plan.changed, *plan.new):
        old = state.get(path)

        def id_for(digest: str, path: str = path, old: FileRecord | None = old) -> str:
            # Kept from before, carried over a move, or derived from where it was first seen.
            if old is not None and old.id:
                return old.id
            return gone_ids_by_digest.get(digest) or memory_mod.derived_id(path)

        if ignored(path):
            loaded.append(ignored_file(path, seen.get(path)))
            continue
        item = load_file(root, path, seen.get(path), id_for, default_importance, known=old)
        if item is not None:
            loaded.append(item)
    return loaded


def ignored_file(path: str, stat: Stat | None) -> Loaded:
    """A file the vault's .gitignore excludes: recorded (so scans see it as known), not read."""
    size, mtime_ns = stat or (0, 0)
    return Loaded(path, FileRecord(size, mtime_ns, "", "", IGNORED), None)


def apply_changes(
    state: State, plan: SyncPlan, loaded: list[Loaded]
) -> tuple[SyncBatch, SyncReport]:
    """Decide the index batch and update `state` in place (no I/O)."""
    report = SyncReport()
    batch = SyncBatch()
    leaving = {*plan.gone, *plan.changed}
    old_ids = {}
    for path in leaving:
        old = state.get(path)
        if old is not None and old.id:
            old_ids[path] = old.id
    live_ids = {mem_id: path for mem_id, path in state.ids().items() if path not in leaving}
    for path in plan.gone:
        state.drop(path)

    def claim_order(item: Loaded) -> int:
        # Who keeps an id two files now share: a file whose bytes did not change, then one
        # that held the id before, then newcomers (a copy is the duplicate, not the original).
        if item.memory is None:
            return 0
        return 1 if old_ids.get(item.path) == item.memory.id else 2

    for item in sorted(loaded, key=claim_order):
        path, record, mem = item.path, item.record, item.memory
        if mem is None:
            if record.id and not record.error:  # unchanged content: keep what we knew
                live_ids[record.id] = path
            state.put(path, record)
            if record.error:
                report.errors[path] = record.error
            continue
        owner = live_ids.get(mem.id)
        if owner is not None and owner != path:
            record.id = ""
            record.error = f"duplicate id {mem.id} (also in {owner})"
            report.errors[path] = record.error
            state.put(path, record)
            continue
        live_ids[mem.id] = path
        state.put(path, record)
        batch.upserts.append(to_doc(mem, record.digest or ""))
        report.paths.append(path)
        if path in plan.new:
            report.added += 1
        else:
            report.updated += 1
    new_paths = set(plan.new)
    for path, old_id in old_ids.items():
        if old_id not in live_ids:
            batch.deletes.append(old_id)
            report.removed += 1
            report.paths.append(path)
        elif path in plan.gone and live_ids[old_id] in new_paths:
            # The same memory at a new path: a move, not an addition.
            report.moved += 1
            report.added -= 1
    return batch, report


def to_doc(mem: Memory, digest: str) -> Doc:
    # Here, not at the top: every command imports this module, few make documents.
    from kenomem.index.concepts import extract as extract_concepts

    created = mem.created.timestamp()
    when = mem.when.timestamp() if mem.when else created
    accessed = mem.last_accessed.timestamp() if mem.last_accessed else created
    updated_at = parse_time(mem.extra.get("updated"))
    return Doc(
        id=mem.id,
        path=mem.path,
        type=mem.type,
        status=mem.status,
        scope=mem.scope,
        session=mem.session or "",
        title=mem.title,
        tags=mem.tags,
        body=mem.body,
        created=created,
        time=when,
        last_accessed=accessed,
        updated=updated_at.timestamp() if updated_at else max(created, accessed),
        access_count=mem.access_count,
        reinforced=mem.reinforced,
        importance=mem.importance,
        pinned=mem.pinned,
        preview=preview(mem.body),
        digest=digest,
        factkey=memory_mod.fact_key(mem.extra),
        people=_people(mem.extra.get("participants")),
        concepts=extract_concepts(mem.title, mem.body, mem.tags),
        textkey=memory_mod.meaning_key(mem.title, mem.body),
    )


def _people(value: object) -> tuple[str, ...]:
    """`participants` as written by hand or by kenomem: a list, or one name."""
    items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    return tuple(str(p).strip() for p in items if str(p).strip())


def preview(body: str, limit: int = 200) -> str:
    text = " ".join(body[: 4 * limit].split())  # enough of a long body, as a rule
    if len(text) <= limit and len(body) > 4 * limit:
        text = " ".join(body.split())  # most of that start was spaces
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
