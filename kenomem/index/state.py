"""What kenomem knows about the files it indexed, under `.kenomem/`.

For each memory file: size and mtime (the cheap test for a change), a content digest
(the real test, and how a move is recognised), the memory's id, the parse error if it
could not be read, and the access overlay: `last_accessed` and `access_count` written by
recall since the file was last indexed, so that touching a memory costs no index write.

It is kept in three files, by who needs them and when:
- `meta.bin`: versions, the access overlay, errors, files to re-verify. Small, read by
  every command.
- `stats.bin`: each file's (size, mtime). Compared with a scan by every sync, but that
  scan usually runs in a child process (see `scanjob`), so the command itself rarely
  reads this file.
- `records.bin`: digests and ids, read only when something changed or an id is looked up.
Each save writes all three with one generation number; files of different generations
(a crash mid-save) make the state unusable, and the index is rebuilt. All of it is
derived.

Between saves, what kenomem writes itself (a new memory, a file recall rewrote to touch
it) and the accesses recall keeps in the state alone are appended to `journal`, one line
each, which `load` reads back and the next save folds in. The journal is kept here and
nowhere else: `journal_rewrite`, `record_writes` and `record_touches` write it,
`journaled_rewrites` reads it for the watcher.

Every one of these files is opened in `.kenomem/` held by descriptor (`beneath.private`:
a real folder of the user's own), never through a link: a link there reads as no state
(the index is rebuilt) and is never written through.
"""

from __future__ import annotations

import marshal
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kenomem.errors import IndexCorrupt, UnsafePath
from kenomem.files import beneath
from kenomem.files.atomic import append_bytes, replace_all

FORMAT = 6
META_NAME = "meta.bin"
STATS_NAME = "stats.bin"
RECORDS_NAME = "records.bin"
JOURNAL_NAME = "journal"
# Journal lines cost a little on every load; past this many they are folded into the state.
JOURNAL_FOLD_LINES = 256

Stat = tuple[int, int]  # size, mtime_ns
Record = tuple[str, str]  # digest, id
# Recall's overlay: last_accessed (epoch), access_count, and the digest of the file as
# recall rewrote it ("" when it did not rewrite it), for its next touch to check against.
Access = tuple[float, int, str]


class FileRecord:
    """One file as last seen (mutable: a sync fills it in as it reads)."""

    __slots__ = ("access_count", "digest", "error", "id", "last_accessed", "mtime_ns", "size")

    def __init__(
        self,
        size: int,
        mtime_ns: int,
        digest: str | None,
        id: str,
        error: str = "",
        last_accessed: float = 0.0,
        access_count: int = -1,
    ) -> None:
        self.size = size
        self.mtime_ns = mtime_ns
        self.digest = digest  # None: unknown here, the content is as last recorded
        self.id = id  # "" when the file could not be read
        self.error = error  # why the file is skipped, with its line when known
        self.last_accessed = last_accessed  # overlay from recall's touches; 0 = none
        self.access_count = access_count  # overlay; -1 = none

    def to_row(self) -> list[object]:
        return [
            self.size,
            self.mtime_ns,
            self.digest,
            self.id,
            self.error,
            self.last_accessed,
            self.access_count,
        ]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileRecord) and self.to_row() == other.to_row()

    def __repr__(self) -> str:
        return f"FileRecord{tuple(self.to_row())!r}"


class State:
    def __init__(self, schema: int, engine: str, directory: Path | None = None) -> None:
        self.schema = schema
        self.engine = engine
        self.directory = directory
        self.generation = 0
        self.ignore_rules = ""  # the .gitignore rules the files were judged under
        self.access: dict[str, Access] = {}
        self.errors: dict[str, str] = {}  # path -> why it is skipped
        # Paths whose stat was recorded too soon after a change to be trusted (scan.RACY_NS).
        self.unverified: set[str] = set()
        fresh = directory is None
        self._stats: dict[str, Stat] | None = {} if fresh else None
        self._records: dict[str, Record] | None = {} if fresh else None
        self._since_save: dict[str, Stat] = {}
        # Journal updates, until the part they belong to is loaded.
        self._pending_stats: dict[str, Stat] = {}
        self._pending_records: dict[str, Record] = {}
        self.journal_lines = 0

    # -- the parts loaded on demand ------------------------------------------------------

    @property
    def stats(self) -> dict[str, Stat]:
        if self._stats is None:
            self._stats = self._load_part(STATS_NAME)
            self._stats.update(self._pending_stats)
            self._pending_stats = {}
        return self._stats

    @property
    def records(self) -> dict[str, Record]:
        if self._records is None:
            self._records = self._load_part(RECORDS_NAME)
            self._records.update(self._pending_records)
            self._pending_records = {}
        return self._records

    def _load_part(self, name: str) -> dict:  # type: ignore[type-arg]
        assert self.directory is not None
        for attempt in range(5):
            try:
                generation, part = marshal.loads(_read(self.directory, name))
            except (OSError, UnsafePath, EOFError, ValueError, TypeError):
                break
            if generation == self.generation and isinstance(part, dict):
                return part
            # Another process saved since our meta was read (or is saving right now):
            # catch up with the newest meta, then read the part again.
            time.sleep(0.005 * attempt)
            if not self._catch_up():
                break
        raise IndexCorrupt(f"{self.directory / name} is missing, damaged or from another save")

    def _catch_up(self) -> bool:
        """Take the meta and journal saved since; False when there is none to take."""
        assert self.directory is not None
        newer = load(self.directory)
        if newer is None:
            return False
        self.generation = newer.generation
        self.access, self.errors, self.unverified = newer.access, newer.errors, newer.unverified
        self._stats = self._records = None
        self._pending_stats, self._pending_records = newer._pending_stats, newer._pending_records
        self._since_save = newer._since_save
        self.journal_lines = newer.journal_lines
        return True

    def stats_since_save(self) -> dict[str, Stat]:
        """Stats recorded in this state since it was saved: the journal's, and this run's."""
        return self._since_save

    # -- one file's record ---------------------------------------------------------------

    def get(self, path: str) -> FileRecord | None:
        stat = self.stats.get(path)
        if stat is None:
            return None
        digest, mem_id = self.records.get(path, ("", ""))
        last_accessed, access_count, _ = self.access.get(path, (0.0, -1, ""))
        error = self.errors.get(path, "")
        return FileRecord(stat[0], stat[1], digest, mem_id, error, last_accessed, access_count)

    def put(self, path: str, record: FileRecord) -> None:
        stat = (record.size, record.mtime_ns)
        self._since_save[path] = stat
        if self._stats is None:
            self._pending_stats[path] = stat
        else:
            self._stats[path] = stat
        if record.digest is not None:
            row = (record.digest, record.id)
            if self._records is None:
                self._pending_records[path] = row
            else:
                self._records[path] = row
            if record.error:
                self.errors[path] = record.error
            else:
                self.errors.pop(path, None)
        if record.access_count >= 0:
            self.access[path] = (record.last_accessed, record.access_count, record.digest or "")
        else:
            self.access.pop(path, None)

    def note_write(self, path: str, record: FileRecord) -> list[object]:
        """Record a file kenomem just wrote; returns its journal line."""
        self.put(path, record)
        return _rewrite_line(path, record)

    def note_access(self, path: str, last_accessed: float, access_count: int) -> list[object]:
        """Record an access to a file that was not rewritten; returns its journal line."""
        digest = self.access.get(path, (0.0, -1, ""))[2]
        self.access[path] = (last_accessed, access_count, digest)
        return ["a", path, last_accessed, access_count]

    def drop(self, path: str) -> None:
        self.stats.pop(path, None)
        self.records.pop(path, None)
        self.access.pop(path, None)
        self.errors.pop(path, None)
        self.unverified.discard(path)

    def accessed(self, path: str, last_accessed: float, access_count: int) -> tuple[float, int]:
        """The latest access of a memory: the indexed values, or recall's newer overlay."""
        overlay = self.access.get(path)
        if overlay is None:
            return last_accessed, access_count
        return max(last_accessed, overlay[0]), overlay[1]

    def current_digest(self, path: str, indexed: str) -> str:
        """What the file's digest should be: as recall last rewrote it, else as indexed."""
        overlay = self.access.get(path)
        return overlay[2] if overlay is not None and overlay[2] else indexed

    def __len__(self) -> int:
        return len(self.stats)

    def __contains__(self, path: object) -> bool:
        return path in self.stats

    def paths(self) -> Iterator[str]:
        return iter(self.stats)

    def ids(self) -> dict[str, str]:
        """id -> path, for every file that was read."""
        return {row[1]: path for path, row in self.records.items() if row[1]}


def load(directory: Path) -> State | None:
    """The saved state's meta with its journal applied, or None when there is none usable.

    Stats and records are read later, when they are first needed.
    """
    try:
        folder = beneath.private(directory, create=False)
    except (OSError, UnsafePath):
        return None
    with folder:
        try:
            data = marshal.loads(_read_in(folder, META_NAME))
            if data.get("format") != FORMAT:
                return None
            state = State(data["schema"], data["engine"], directory)
            state.generation = data["generation"]
            state.ignore_rules = data["ignore_rules"]
            state.access = data["access"]
            state.errors = data["errors"]
            state.unverified = set(data["unverified"])
        except (OSError, EOFError, ValueError, TypeError, KeyError, AttributeError):
            return None
        _apply_journal(_journal_entries(folder), state)
    return state


def _read(directory: Path, name: str) -> bytes:
    """The bytes of the file `name` in `.kenomem/` (`directory`), never read through a
    link (`UnsafePath` for one, `OSError` when it cannot be read)."""
    with beneath.private(directory, create=False) as folder:
        return _read_in(folder, name)


def _read_in(folder: beneath.Folder, name: str) -> bytes:
    fd = os.open(name, os.O_RDONLY | beneath.NOFOLLOW, dir_fd=folder.fd)
    with open(fd, "rb") as handle:
        return handle.read()


def save(directory: Path, state: State, *, fsync: bool = False) -> None:
    """Write the whole state and empty the journal (whose lines it now holds)."""
    generation = state.generation + 1
    stats, records = state.stats, state.records  # loaded before the number changes
    meta = {
        "format": FORMAT,
        "schema": state.schema,
        "engine": state.engine,
        "generation": generation,
        "ignore_rules": state.ignore_rules,
        "access": state.access,
        "errors": state.errors,
        "unverified": sorted(state.unverified),
    }
    # Made if missing, inside a vault that exists (never recreating one).
    with beneath.private(directory) as folder:
        # All three written before any is replaced: a save that fails (a full disk)
        # leaves the last one whole.
        replace_all(
            [
                (directory / RECORDS_NAME, marshal.dumps((generation, records))),
                (directory / STATS_NAME, marshal.dumps((generation, stats))),
                (directory / META_NAME, marshal.dumps(meta)),
            ],
            fsync=fsync,
            folder=folder,
        )
        try:
            os.unlink(JOURNAL_NAME, dir_fd=folder.fd)
        except FileNotFoundError:
            pass
    state.generation = generation
    state.journal_lines = 0
    state._since_save = {}
    state.directory = directory


# -- the journal -------------------------------------------------------------------------


def journal_rewrite(directory: Path, path: str, record: FileRecord) -> None:
    """Journal a file kenomem is about to rename into place, before the rename: a watcher
    that sees the rename then finds it recorded (`journaled_rewrites`) and knows the change
    for kenomem's own. The state in memory learns of it from `record_touches`."""
    append_journal(directory, [_rewrite_line(path, record)])


def record_writes(directory: Path, state: State, written: list[tuple[str, FileRecord]]) -> None:
    """Files kenomem just wrote: into the state, and into its journal in one append."""
    lines = [state.note_write(path, record) for path, record in written]
    append_journal(directory, lines)
    state.journal_lines += len(lines)


def record_touches(
    directory: Path,
    state: State,
    rewritten: list[tuple[str, FileRecord]],
    accessed: list[tuple[str, float, int]],
) -> None:
    """Recall's touches: the files it rewrote (each journaled already, by
    `journal_rewrite`) and the accesses (path, last_accessed, access_count) kept in the
    state alone, which are journaled now; or, once the journal has grown long, the state
    is saved, which folds the journal in."""
    if not rewritten and not accessed:
        return
    for path, record in rewritten:
        state.note_write(path, record)
    lines = [state.note_access(path, at, count) for path, at, count in accessed]
    state.journal_lines += len(rewritten)
    if state.journal_lines + len(lines) >= JOURNAL_FOLD_LINES:
        save(directory, state)
    else:
        append_journal(directory, lines)
        state.journal_lines += len(lines)


def append_journal(directory: Path, lines: list[list[object]]) -> None:
    """Append journal lines, all or none (a torn last line, of a process killed
    mid-write, is ignored when read)."""
    if not lines:
        return
    import json

    data = "".join(json.dumps(line) + "\n" for line in lines).encode("utf-8")
    with beneath.private(directory, create=False) as folder:
        try:
            append_bytes(directory / JOURNAL_NAME, data, fsync=False, create=True, folder=folder)
        except OSError:
            if beneath.is_link(folder, JOURNAL_NAME):
                raise beneath.private_link_error(directory / JOURNAL_NAME) from None
            raise


def _rewrite_line(path: str, record: FileRecord) -> list[object]:
    """The journal line of a file kenomem wrote, as `_apply_journal` reads it back."""
    return ["r", path, *record.to_row()]


def journaled_rewrites(directory: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime_ns) of each file the journal says kenomem rewrote since the last
    save (its latest entry): what a watcher needs to tell kenomem's own rewrites from a
    person's edits without loading the whole state."""
    found: dict[str, tuple[int, int]] = {}
    try:
        folder = beneath.private(directory, create=False)
    except (OSError, UnsafePath):
        return found
    with folder:
        entries = list(_journal_entries(folder))
    for entry in entries:
        try:
            kind, where, size, mtime_ns, *_ = entry
            if kind == "r" and isinstance(where, str):
                found[where] = (int(size), int(mtime_ns))
        except (ValueError, TypeError):
            continue
    return found


def _apply_journal(entries: Iterator[Any], state: State) -> None:
    for entry in entries:
        try:
            kind, where, *rest = entry
            if kind == "r":
                state.put(where, FileRecord(*rest))
            elif kind == "a":
                state.note_access(where, float(rest[0]), int(rest[1]))
            else:
                continue
        except (ValueError, TypeError, IndexError):
            continue
        state.journal_lines += 1


def _journal_entries(folder: beneath.Folder) -> Iterator[Any]:
    """Each line of the journal in `folder`, parsed; an unreadable journal (or a link)
    has none, a line that is not JSON (a torn last line) is skipped."""
    try:
        text = _read_in(folder, JOURNAL_NAME).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return
    import json

    for line in text.splitlines():
        try:
            yield json.loads(line)
        except ValueError:
            continue
