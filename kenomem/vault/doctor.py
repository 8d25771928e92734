"""`doctor`: find what is wrong in a vault, and with `--fix` repair only what is safe.

Reported: files that cannot be read (broken frontmatter with its line, binary, not
UTF-8, too large, symlinks out of the vault), duplicate ids, `supersedes` links to
memories that do not exist, markdown files outside the known folders, notes written
without a frontmatter, an index out of step with the files, a lock file or a heartbeat
left by a process that died, the temporary files and index folders of killed runs
(`leftovers.py`), and likely secrets written by hand into memory files, buffer days or
the foundation (the doors refuse them; a file edited by hand never went through one).

The index is judged as the next command's change scan would leave it: a file changed
since the index last saw it (an edit, a pull) is one that scan reads, not a problem; the
index is out of step when it disagrees with a file that scan would not read again (an
entry lost, an index older than the state that describes it). Without `--fix`, nothing
is written, the index and the lock file included.

Repaired with `--fix`: the index (rebuilt from the files), a dead lock file and a dead
watcher's heartbeat (cleared), the leftovers of killed runs (removed), and memory files
with a frontmatter and no id in it (given the id kenomem already knows them by). Nothing
else is ever changed: a note without a frontmatter is never given one.

Every finding is a problem except the notes (`NOTES`): `outside` (kenomem does not read
such a file, which may be just what its owner wants) and `plain-note` (a memory file
without a frontmatter, as a person may write one: its id is kept in `.kenomem/`);
`Finding.problem` says which, and the command exits 1 while a problem is left (found
without `--fix`, or not fixed by it).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import NamedTuple

from kenomem.errors import IndexCorrupt, KenomemError, UnsafePath
from kenomem.files import beneath, fm, store
from kenomem.files.ignore import matcher
from kenomem.files.lock import LOCK_NAME, held_elsewhere
from kenomem.files.memory import Memory, derived_id
from kenomem.files.paths import (
    BUFFER_DIR,
    FOUNDATION,
    MEMORY_DIRS,
    STATE_DIR,
    inside,
    read_text_inside,
)
from kenomem.files.plural import counted
from kenomem.files.scan import Stat, scan
from kenomem.index import Filters, heartbeat, leftovers
from kenomem.index import state as state_mod
from kenomem.index.state import State
from kenomem.index.sync import fixed_id, load_file, plan_sync
from kenomem.vault.core import CoreVault

_ROOT_FILES = (FOUNDATION, "README.md")


# Kinds of findings that are information, not problems.
NOTES = frozenset({"outside", "plain-note"})


class Finding(NamedTuple):
    # unreadable | duplicate-id | broken-link | outside | plain-note | no-id | index |
    # lock | watcher | leftover | secret
    kind: str
    path: str
    message: str
    line: int | None = None
    fixable: bool = False

    @property
    def problem(self) -> bool:
        return self.kind not in NOTES


class DoctorRequest(NamedTuple):
    fix: bool = False  # repair what is safe to repair


class DoctorResult(NamedTuple):
    vault: str
    files: int
    findings: list[Finding]
    fixed: list[str]
    problems: int = 0  # problems left: found without --fix, or found and not fixed by it

    @property
    def healthy(self) -> bool:
        """No problem found (notes are information)."""
        return not any(f.problem for f in self.findings)


def doctor(vault: CoreVault, request: DoctorRequest) -> DoctorResult:
    fix = request.fix
    findings: list[Finding] = []
    findings += _dead_processes(vault)
    findings += _leftovers(vault)
    state = _state(vault)
    memories, file_findings, seen = _read_all(vault, state)
    findings += file_findings
    findings += _links(memories)
    findings += _outside(vault)
    findings += _index(vault, memories, _pending(vault, state, seen))
    findings += _secrets(vault, memories)
    fixed = _fix(vault, findings, memories) if fix else []
    left = [f for f in findings if f.problem and not (fix and f.fixable)]
    if fix:  # what a repair could not clear is found again
        left += _dead_processes(vault) + _leftovers(vault)
    return DoctorResult(str(vault.root), len(seen), findings, fixed, len(left))


def _written_id(vault: CoreVault, path: str) -> object:
    """The `id` value the file's frontmatter holds, as parsed (None when it has none)."""
    try:
        text = read_text_inside(vault.root, path)
        parts = fm.split(text, path)
        return fm.parse(parts.fm_text, path=path, first_line=parts.first_line).get("id")
    except (KenomemError, OSError, UnicodeDecodeError):
        return None


def _state(vault: CoreVault) -> State | None:
    """The saved state, as the next command would load it (None: there is none)."""
    return state_mod.load(vault.state_dir)


def _read_all(
    vault: CoreVault, state: State | None
) -> tuple[dict[str, Memory], list[Finding], dict[str, Stat]]:
    """Every memory file, parsed: {path: memory}, what was wrong with the others, and
    every file's stat as the change scan sees it."""
    known_ids = _known_ids(state)
    ignored = matcher(vault.ignore_rules)
    seen = scan(vault.root)
    findings = [Finding("unreadable", path, why) for path, why in seen.problems.items()]
    memories: dict[str, Memory] = {}
    owners: dict[str, str] = {}
    # The file the index knows an id by keeps it; a copy made since is the duplicate.
    for path in sorted(seen.files, key=lambda p: (p not in known_ids, p)):
        if ignored(path):
            continue
        fallback = known_ids.get(path) or derived_id(path)
        item = load_file(
            vault.root, path, None, fixed_id(fallback), vault.settings.memory.default_importance
        )
        if item is None:
            continue
        if item.memory is None:
            line, why = _split_line(item.record.error)
            findings.append(Finding("unreadable", path, why, line))
            continue
        mem = item.memory
        if mem.id in owners:
            findings.append(
                Finding("duplicate-id", path, f"id {mem.id} is also the id of {owners[mem.id]}")
            )
            continue
        owners[mem.id] = path
        memories[path] = mem
        if not mem.has_frontmatter:  # a person's note: never given a frontmatter
            findings.append(
                Finding(
                    "plain-note",
                    path,
                    f"a note without frontmatter, known as {mem.id} (the id is kept in "
                    f"{STATE_DIR}/; kenomem never adds a frontmatter to the file)",
                )
            )
        elif not mem.has_id:
            written = _written_id(vault, path)
            if written in (None, ""):
                message, fixable = f"no id in the file; known as {mem.id}", True
            else:  # a person's value kenomem cannot read (`id: [a, b]`): theirs to change
                message = (
                    f"its id {written!r} is not one line of text; known as {mem.id} "
                    "until it is (edit the file)"
                )
                fixable = False
            findings.append(Finding("no-id", path, message, fixable=fixable))
    return memories, findings, seen.files


def _known_ids(state: State | None) -> dict[str, str]:
    """path -> id as the state knows them (derived ids of hand-made files included)."""
    try:
        return {path: mem_id for mem_id, path in state.ids().items()} if state else {}
    except IndexCorrupt:
        return {}


def _pending(vault: CoreVault, state: State | None, seen: dict[str, Stat]) -> set[str] | None:
    """The paths the next command's change scan reads or drops (new, changed, gone
    since the state last saw them), which the index need not hold as they are now; None
    when that command rebuilds the index from nothing (no state, or one it cannot use)."""
    if state is None or vault._unusable(state):
        return None
    try:
        # Not its unverified files (written within the file system's time granularity):
        # read again, they are indexed anew only if their content changed.
        plan = plan_sync(state.stats, seen)
    except IndexCorrupt:
        return None
    return {*plan.new, *plan.changed, *plan.gone}


def _split_line(error: str) -> tuple[int | None, str]:
    head, _, rest = error.partition(": ")
    if head.startswith("line ") and head[5:].isdigit():
        return int(head[5:]), rest
    return None, error


def _links(memories: dict[str, Memory]) -> list[Finding]:
    ids = {mem.id for mem in memories.values()}
    findings = []
    for path, mem in memories.items():
        for key, target in (("supersedes", mem.supersedes), ("superseded_by", mem.superseded_by)):
            if target and target not in ids:
                findings.append(
                    Finding("broken-link", path, f"{key}: {target} names no memory in the vault")
                )
    return findings


def _outside(vault: CoreVault) -> list[Finding]:
    """Markdown files kenomem does not read: in the vault's root or in unknown folders."""
    findings = []
    known = {*MEMORY_DIRS, BUFFER_DIR, STATE_DIR}
    for top in sorted(os.listdir(vault.root)):
        full = vault.root / top
        if top.startswith(".") or top in known:
            continue
        if full.is_file() and top.endswith(".md") and top not in _ROOT_FILES:
            findings.append(Finding("outside", top, "a markdown file outside the memory folders"))
        elif full.is_dir() and not full.is_symlink():
            for folder, dirs, names in os.walk(full):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                for name in names:
                    if name.endswith(".md") and not name.startswith("."):
                        rel = os.path.relpath(os.path.join(folder, name), vault.root)
                        findings.append(
                            Finding(
                                "outside",
                                rel.replace(os.sep, "/"),
                                "in a folder kenomem does not read (semantic/, episodic/, ...)",
                            )
                        )
    return findings


def _index(
    vault: CoreVault, memories: dict[str, Memory], pending: set[str] | None
) -> list[Finding]:
    """The index against the files, but for those the next change scan reads again
    (`pending`): it indexes them before it answers, as every command does."""
    if not vault.engine.exists():
        return []  # not built yet: the next command builds it
    try:
        docs = vault.engine.browse(Filters(statuses=()), "created", False, None).hits
    except IndexCorrupt as exc:
        return [Finding("index", ".kenomem/index", exc.message, fixable=True)]
    if pending is None:
        return []  # the next command rebuilds it from the files
    wanted = {mem.id: path for path, mem in memories.items() if path not in pending}
    indexed = {hit.doc.id: hit.doc.path for hit in docs if hit.doc.path not in pending}
    missing = [i for i in wanted if i not in indexed]
    extra = [i for i in indexed if i not in wanted]
    moved = [i for i in wanted if i in indexed and indexed[i] != wanted[i]]
    if not (missing or extra or moved):
        return []
    parts = [
        f"{counted(len(missing), 'memory')} not in it" if missing else "",
        f"{counted(len(extra), 'entry')} for files that are gone" if extra else "",
        f"{len(moved)} at an old path" if moved else "",
    ]
    message = "the index is out of step with the files: " + ", ".join(p for p in parts if p)
    return [Finding("index", ".kenomem/index", message, fixable=True)]


def _dead_processes(vault: CoreVault) -> list[Finding]:
    findings = []
    lock_pid = _pid_in(vault.state_dir)
    if lock_pid and not heartbeat.alive(lock_pid) and not held_elsewhere(vault.state_dir):
        findings.append(
            Finding(
                "lock",
                f"{STATE_DIR}/{LOCK_NAME}",
                f"left by process {lock_pid}, which is not running (the lock itself was released)",
                fixable=True,
            )
        )
    beat = heartbeat.read(vault.state_dir)
    if beat is not None and not heartbeat.alive(beat.pid):
        findings.append(
            Finding(
                "watcher",
                f"{STATE_DIR}/{heartbeat.NAME}",
                f"the watcher (process {beat.pid}) died; commands scan the files themselves",
                fixable=True,
            )
        )
    return findings


def _leftovers(vault: CoreVault) -> list[Finding]:
    return [
        Finding("leftover", item.path, item.describe(), fixable=True)
        for item in leftovers.find(vault.root)
    ]


def _pid_in(state_dir: Path) -> int:
    """The pid the lock file holds (0 if none). Read in `.kenomem/` held by descriptor,
    never through a link (one there, which the lock itself refuses, holds no pid), and
    without waiting on a pipe put in its place."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = beneath.open_private(state_dir, LOCK_NAME, flags, create=False)
    except (OSError, UnsafePath):
        return 0
    try:
        text = os.read(fd, 32).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return 0
    finally:
        os.close(fd)
    return int(text) if text.isdigit() else 0


def _fix(vault: CoreVault, findings: list[Finding], memories: dict[str, Memory]) -> list[str]:
    done = []
    kinds = {f.kind for f in findings if f.fixable}
    if "lock" in kinds:
        with vault.lock:  # taking and releasing it leaves the file empty
            pass
        done.append("cleared the lock file left by a dead process")
    if "watcher" in kinds:
        heartbeat.clear(vault.state_dir)
        done.append("removed the heartbeat of the dead watcher")
    if "leftover" in kinds:
        with vault.lock:
            gone = leftovers.clean(vault.root)
        done.append(f"removed {len(gone)} temporary files and folders left by killed runs")
    for finding in findings:
        if finding.kind == "no-id" and finding.fixable:
            mem = memories[finding.path]
            with vault.lock:
                store.update_keys(
                    vault.root, finding.path, {"id": mem.id}, fsync=vault.settings.write.fsync
                )
            done.append(f"wrote id {mem.id} into {finding.path}")
    if "index" in kinds or "no-id" in kinds:
        report = vault.rebuild(reason="")
        done.append(f"rebuilt the index from the files ({counted(report.indexed, 'memory')})")
    return done


def _secrets(vault: CoreVault, memories: dict[str, Memory]) -> list[Finding]:
    """Likely secrets in the files people write: each with its line and kind, and no
    more of it than `Finding.masked` shows."""
    from kenomem.files.buffer import days
    from kenomem.files.secrets import find_secrets

    findings = []
    for path in [*sorted(memories), *days(vault.root), FOUNDATION]:
        text = _text_of(vault, path)
        for found in find_secrets(text):
            findings.append(
                Finding(
                    "secret",
                    path,
                    f"looks like a secret ({found.described(text)}); move it to a "
                    "password manager and write down where it lives instead",
                    text.count("\n", 0, found.start) + 1,
                )
            )
    return findings


def _text_of(vault: CoreVault, path: str) -> str:
    """A regular file's text, if it is inside the vault and not too large; else ""."""
    from kenomem.errors import InvalidInput
    from kenomem.index.sync import MAX_FILE_BYTES

    full = vault.root / path
    try:
        inside(vault.root, full)
        fd = os.open(full, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(fd, "rb") as handle:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
                return ""
            return handle.read(MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except (OSError, InvalidInput):
        return ""
