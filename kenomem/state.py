"""What kenomem knows about the files it indexed, under `.kenomem/`.

For each memory file: size and mtime (the cheap test for a change), a content digest (the
real test, and how a move is recognised), the memory's id, the parse error if it could
not be read, and the access overlay: `last_accessed` and `access_count` written by
recall since the file was last indexed, so that touching a memory costs no index write.

It is split by how often it is needed. `state.bin` holds the stats and the overlay and is
read by every command: when no file changed, comparing its stats with a scan is all a
sync does. `records.bin` (digests, ids, errors) is read only when something changed or an
id must be resolved. Recall's touches are appended to `state.journal` and folded in at
the next save. All of it is derived: when it is missing or unreadable the index is
rebuilt.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Iterator
from pathlib import Path

from kenomem.atomic import write_bytes

FORMAT = 4
STATE_NAME = "state.bin"
RECORDS_NAME = "records.bin"
JOURNAL_NAME = "state.journal"
# Journal lines cost a little on every load; past this many they are folded into the state.
JOURNAL_FOLD_LINES = 256

Stat = tuple[int, int]  # size, mtime_ns
Record = tuple[str, str]  # digest, id
Access = tuple[float, int]  # last_accessed (epoch), access_count


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
        self.digest = digest
        self.id = id  # "" when the file could not be read
        self.error = error  # why the file is skipped, with its line when known
        self.last_accessed = last_accessed  # overlay from recall's touches; 0 = none
        self.access_count = access_count  # overlay; -1 = none

    def to_row(self) -> list[object]:
        return [self.size, self.mtime_ns, self.digest, self.id, self.error,
                self.last_accessed, self.access_count]  # fmt: skip

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileRecord) and self.to_row() == other.to_row()

    def __repr__(self) -> str:
        return f"FileRecord{tuple(self.to_row())!r}"


class State:
    def __init__(self, schema: int, engine: str, directory: Path | None = None) -> None:
        self.schema = schema
        self.engine = engine
        self.directory = directory
        self.stats: dict[str, Stat] = {}
        self.access: dict[str, Access] = {}
        self.errors: dict[str, str] = {}  # path -> why it is skipped
        # Paths whose stat was recorded too soon after a change to be trusted (sync.RACY_NS).
        self.unverified: set[str] = set()
        self._records: dict[str, Record] | None = {} if directory is None else None
        self._pending: dict[str, Record] = {}  # journal records, until records are loaded
        self.journal_lines = 0

    # -- records, loaded on demand ---------------------------------------------------

    @property
    def records(self) -> dict[str, Record]:
        if self._records is None:
            self._records = _load_records(self.directory) if self.directory else {}
            self._records.update(self._pending)
            self._pending = {}
        return self._records

    def get(self, path: str) -> FileRecord | None:
        stat = self.stats.get(path)
        if stat is None:
            return None
        digest, mem_id = self.records.get(path, ("", ""))
        last_accessed, access_count = self.access.get(path, (0.0, -1))
        error = self.errors.get(path, "")
        return FileRecord(stat[0], stat[1], digest, mem_id, error, last_accessed, access_count)

    def put(self, path: str, record: FileRecord) -> None:
        self.stats[path] = (record.size, record.mtime_ns)
        if record.digest is not None:  # None: the content is as it was (an access only)
            row = (record.digest, record.id)
            if self._records is None:
                self._pending[path] = row
            else:
                self._records[path] = row
            if record.error:
                self.errors[path] = record.error
            else:
                self.errors.pop(path, None)
        if record.access_count >= 0:
            self.access[path] = (record.last_accessed, record.access_count)
        else:
            self.access.pop(path, None)

    def drop(self, path: str) -> None:
        self.stats.pop(path, None)
        self.access.pop(path, None)
        self.errors.pop(path, None)
        self.unverified.discard(path)
        self.records.pop(path, None)

    def accessed(self, path: str, last_accessed: float, access_count: int) -> Access:
        """The latest access of a memory: the indexed values, or recall's newer overlay."""
        overlay = self.access.get(path)
        if overlay is None:
            return last_accessed, access_count
        return max(last_accessed, overlay[0]), overlay[1]

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
    """The saved state with its journal applied, or None when there is none usable."""
    try:
        data = marshal.loads((directory / STATE_NAME).read_bytes())
        if data.get("format") != FORMAT:
            return None
        state = State(data["schema"], data["engine"], directory)
        state.stats = data["stats"]
        state.access = data["access"]
        state.errors = data["errors"]
        state.unverified = set(data["unverified"])
    except (OSError, EOFError, ValueError, TypeError, KeyError, AttributeError):
        return None
    _apply_journal(directory / JOURNAL_NAME, state)
    return state


def save(directory: Path, state: State, *, fsync: bool = False) -> None:
    """Write the whole state and empty the journal (whose lines it now holds)."""
    directory.mkdir(parents=True, exist_ok=True)
    # Records first: a crash before the stats are written leaves stale stats, and a
    # stale stat only makes the next sync read that file again.
    write_bytes(directory / RECORDS_NAME, marshal.dumps(state.records), fsync=fsync)
    data = {
        "format": FORMAT,
        "schema": state.schema,
        "engine": state.engine,
        "stats": state.stats,
        "access": state.access,
        "errors": state.errors,
        "unverified": sorted(state.unverified),
    }
    write_bytes(directory / STATE_NAME, marshal.dumps(data), fsync=fsync)
    try:
        os.unlink(directory / JOURNAL_NAME)
    except FileNotFoundError:
        pass
    state.journal_lines = 0
    state.directory = directory


def append_journal(directory: Path, entries: dict[str, FileRecord]) -> None:
    """Record touched files cheaply; a torn last line is ignored when read back."""
    if not entries:
        return
    import json

    lines = "".join(json.dumps([path, *rec.to_row()]) + "\n" for path, rec in entries.items())
    with open(directory / JOURNAL_NAME, "a", encoding="utf-8") as handle:
        handle.write(lines)


def _load_records(directory: Path) -> dict[str, Record]:
    try:
        records = marshal.loads((directory / RECORDS_NAME).read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        records = None
    if not isinstance(records, dict):
        from kenomem.errors import IndexCorrupt

        raise IndexCorrupt(f"{directory / RECORDS_NAME} is missing or damaged")
    return records


def _apply_journal(path: Path, state: State) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    import json

    for line in text.splitlines():
        try:
            row = json.loads(line)
            state.put(row[0], FileRecord(*row[1:]))
        except (ValueError, TypeError, IndexError):
            continue
        state.journal_lines += 1
