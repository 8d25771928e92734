"""`kenomem import`: chat histories and memories from JSON or JSONL, into the vault.

The records (see `import_forms`) become files: each turn an episodic memory (or, with
target "buffer", an entry of its day's buffer file, for the sleep cycle), each memory a
memory of its type. Every record is checked whole before anything is written, and is
written in one atomic file (or one append), so a record is never half imported; a bad
record is reported with where it was and the others go on. Likely secrets are refused
record by record, as `remember` refuses them, and so is a record holding a control
character in any field it would write (`import_build.check_made`).

An agent's transcript or export (`transcripts`: Claude Code, Codex CLI, ChatGPT,
Claude.ai) is told apart by its content and read as its turns; a folder of them is
imported in one go (`import_folder`).

Importing the same file again creates nothing: a turn's id is made from its
conversation and its own id (or its speaker, text and time; an agent's turn, from the
agent, its session and the message's id), a memory keeps its `id`, and a buffer entry
already in its day is not appended again.

Fast for big files: each file is written with the atomic writer, the folders are made
durable once at the end, and the index takes every new memory in one batch.
"""

from __future__ import annotations

import os
import stat
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from kenomem.errors import InvalidInput, UsageError
from kenomem.files import store
from kenomem.files.buffer import Entry, append, day_path, format_entry, read_day_if_any
from kenomem.files.memory import Memory, check_type
from kenomem.files.paths import check_label, check_tag
from kenomem.files.secrets import redact
from kenomem.files.textcheck import check_fields
from kenomem.ingest.build import KEY_BYTES, Builder, ImportRequest, Plan, first
from kenomem.ingest.forms import TURN_ID_KEYS, Parsed, Record, parse
from kenomem.vault.core import CoreVault

TARGETS = ("episodic", "buffer")
WRITERS = 8  # threads writing files when each is fsynced

Progress = Callable[[int, int], None]  # (done, total)


class ImportItem(NamedTuple):
    where: str  # "line 12" (JSONL) or "item 12" (the record's number in the file)
    line: int | None
    action: str  # created | would create | skipped | invalid
    id: str  # the memory's id ("" for a buffer entry or an invalid record)
    path: str
    source_id: str  # the record's own id in the file, if it had one
    reason: str  # why it was skipped or is invalid


class ImportResult(NamedTuple):
    file: str
    format: (
        str  # json | jsonl | an agent's format (claude-code, codex, chatgpt, claude-ai) | folder
    )
    target: str
    dry_run: bool
    created: int
    skipped: int
    invalid: int
    items: list[ImportItem]
    warnings: list[str]
    seconds: float


def import_records(
    vault: CoreVault, request: ImportRequest, progress: Progress | None = None
) -> ImportResult:
    started = time.perf_counter()
    _validate(request)
    return _import(vault, request, _parse(request), [], started, progress)


def import_folder(
    vault: CoreVault,
    folder: str | os.PathLike[str],
    request: ImportRequest,
    progress: Progress | None = None,
) -> ImportResult:
    """Every agent transcript or export in `folder` and the folders under it
    (`~/.claude/projects/`, `~/.codex/sessions/`), in one import: files of the agents'
    formats only (`transcripts.detect`), the others counted and left out; no symlink
    followed, neither to a file nor to a folder, so the walk never leaves `folder`."""
    from kenomem.ingest import transcripts

    started = time.perf_counter()
    _validate(request)
    top = Path(folder).expanduser()
    records: list[Record] = []
    warnings: list[str] = []
    others = 0
    for path in _walk(top):
        rel = path.relative_to(top).as_posix()
        try:
            text = _read_regular(path)
        except InvalidInput as exc:
            warnings.append(exc.message)
            continue
        found = transcripts.read(text) if text.strip() else None
        if found is None:
            others += 1
            continue
        for record in transcripts.parsed(found, request.session, rel).records:
            records.append(record._replace(where=record.where._replace(item=len(records) + 1)))
    if others:
        warnings.append(f"left out {others} files of {top} that are no agent transcript")
    parsed = Parsed("folder", records)
    return _import(vault, request._replace(name=str(folder)), parsed, warnings, started, progress)


def _parse(request: ImportRequest) -> Parsed:
    """The records of the request's text: an agent's transcript or export (`transcripts`,
    told by content), else JSON or JSONL of messages and memories (`forms`)."""
    from kenomem.ingest import transcripts

    found = transcripts.read(request.text)
    if found is not None:
        return transcripts.parsed(found, request.session)
    return parse(request.text, typed=request.type is not None)


def _walk(top: Path) -> list[Path]:
    """The regular files under `top` named `*.jsonl` or `*.json`, in order; symlinks left
    out (`os.walk` does not follow those to folders; those to files are not regular)."""
    if not top.is_dir():
        raise InvalidInput(f"cannot read {top}: not a folder")
    found: list[Path] = []
    for parent, folders, names in os.walk(top, onerror=None, followlinks=False):
        folders.sort()
        for name in sorted(names):
            if not name.endswith((".jsonl", ".json")):
                continue
            path = Path(parent, name)
            try:
                if stat.S_ISREG(os.lstat(path).st_mode):
                    found.append(path)
            except OSError:
                continue
    return found


def _read_regular(path: Path) -> str:
    """A regular file's text, opened without following a symlink (one swapped in since
    the walk saw the file is refused) and without blocking on a FIFO."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InvalidInput(f"cannot read {path}: not a regular file")
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidInput(f"cannot read {path}: not UTF-8 text") from None


def _import(
    vault: CoreVault,
    request: ImportRequest,
    parsed: Parsed,
    warnings: list[str],
    started: float,
    progress: Progress | None,
) -> ImportResult:
    now = (request.now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    default_importance = vault.settings.memory.default_importance
    builder = Builder(request, now, len(parsed.records), default_importance)
    plans = [builder.plan(record) for record in parsed.records]
    with vault.lock:
        vault.sync()
        plans = _memories(vault, plans, request.dry_run, progress)
        if request.target == "buffer":
            plans = _buffer(vault, plans, request.dry_run, warnings, progress)
    items = [_item(p) for p in plans]
    counts = Counter(
        "created" if p.action in ("created", "would create") else p.action for p in plans
    )
    return ImportResult(
        request.name,
        parsed.format,
        request.target,
        request.dry_run,
        counts["created"],
        counts["skipped"],
        counts["invalid"],
        items,
        warnings,
        round(time.perf_counter() - started, 3),
    )


def read_file(path: str | os.PathLike[str]) -> str:
    try:
        return Path(path).expanduser().read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"cannot read {path}: not UTF-8 text") from None


def _validate(request: ImportRequest) -> None:
    if request.target not in TARGETS:
        raise UsageError(f"--as must be one of {', '.join(TARGETS)}, not {request.target!r}")
    if request.type is not None:
        check_type(request.type)
    check_fields({"session id": request.session, "tag": request.tags}, then="nothing was imported")
    if request.session is not None:
        check_label(request.session, "session id")
    for tag in request.tags:
        check_tag(tag)


def _item(plan: Plan) -> ImportItem:
    where = plan.record.where
    source = ""
    if plan.record.kind == "turn":  # echoed in the report: never a secret it held
        source = redact(first(plan.record.data, TURN_ID_KEYS))
    elif plan.record.kind == "transcript":
        source = redact(plan.record.data["turn"].id)
    return ImportItem(str(where), where.line, plan.action, plan.id, plan.path, source, plan.reason)


# -- writing ----------------------------------------------------------------------------


def _memories(
    vault: CoreVault, plans: list[Plan], dry_run: bool, progress: Progress | None
) -> list[Plan]:
    ids = dict(vault.ids())
    suffixes = {i.rsplit("_", 1)[-1] for i in ids}
    decided: list[Plan] = []
    todo: list[int] = []
    for plan in plans:
        mem = plan.made
        if not isinstance(mem, Memory):
            decided.append(plan)
            continue
        suffix = mem.id.rsplit("_", 1)[-1]
        # A generated id's last part is the record's key: the same record imported before.
        if mem.id in ids or (len(suffix) == 2 * KEY_BYTES and suffix in suffixes):
            path = ids.get(mem.id, "")
            decided.append(plan._replace(action="skipped", reason="already imported", path=path))
            continue
        ids[mem.id] = ""
        suffixes.add(suffix)
        folder = store.folder_for(mem)
        decided.append(plan._replace(action="would create", path=folder + "/"))
        todo.append(len(decided) - 1)
    if dry_run or not todo:
        return decided
    written: list[tuple[Memory, store.Written]] = []
    folders: set[Path] = set()
    fsync = vault.settings.write.fsync
    mems = [decided[i].made for i in todo]

    def create(mem: Memory) -> store.Written:
        return store.create(vault.root, mem, fsync=fsync, sync_dir=False)

    # Each file's fsync waits on the disk: a few threads let those waits overlap.
    pool = ThreadPoolExecutor(WRITERS if fsync else 1)
    try:
        for done, (index, w) in enumerate(zip(todo, pool.map(create, mems), strict=True), 1):
            mem = decided[index].made
            assert isinstance(mem, Memory)
            written.append((mem, w))
            parent = (vault.root / w.path).parent
            folders.update((parent, parent.parent))  # the month's folder may be new
            decided[index] = decided[index]._replace(action="created", path=w.path)
            if progress is not None:
                progress(done, len(todo))
    finally:
        pool.shutdown(cancel_futures=True)
        if fsync:
            from kenomem.files.atomic import fsync_dir

            for made in sorted(folders):
                fsync_dir(made)
        vault.index_new_many(written)
    return decided


def _buffer(
    vault: CoreVault,
    plans: list[Plan],
    dry_run: bool,
    warnings: list[str],
    progress: Progress | None,
) -> list[Plan]:
    by_day: dict[str, list[int]] = {}
    for index, plan in enumerate(plans):
        if isinstance(plan.made, Entry):
            by_day.setdefault(day_path(plan.made.at.date()), []).append(index)
    decided = list(plans)
    total = sum(len(v) for v in by_day.values())
    done = 0
    for rel in sorted(by_day):
        day = read_day_if_any(vault.root, rel)
        have = {entry_key(e) for e in day.entries} if day else set()
        fresh: list[Entry] = []
        for index in by_day[rel]:
            entry = decided[index].made
            assert isinstance(entry, Entry)
            key = entry_key(entry)
            if key in have:
                decided[index] = decided[index]._replace(
                    action="skipped", reason="already in the buffer", path=rel
                )
                continue
            have.add(key)
            fresh.append(entry)
            action = "would create" if dry_run else "created"
            decided[index] = decided[index]._replace(action=action, path=rel)
        if day is not None and day.consolidated is not None and fresh:
            warnings.append(
                f"{rel} was consolidated already: its {len(fresh)} new entries are "
                "consolidated by the next `kenomem consolidate`"
            )
        if fresh and not dry_run:
            fresh.sort(key=lambda e: e.at)
            data = "".join(format_entry(e) for e in fresh).encode("utf-8")
            append(vault.root, rel, data, fsync=vault.settings.write.fsync)
        done += len(by_day[rel])
        if progress is not None:
            progress(done, total)
    return decided


def entry_key(entry: Entry) -> tuple[object, ...]:
    """What makes two buffer entries one: the time to the second, the speaker, the
    session, the channel and the text. The buffer import and the hooks both skip an entry
    whose key is in the day already, so a turn is logged once whichever door brings it."""
    at = entry.at.astimezone(UTC).replace(microsecond=0)
    return (at, entry.who, entry.session, entry.channel, entry.text.strip("\n"))
