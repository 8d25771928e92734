"""`reset`: start over, with a way back.

`--memory` removes the buffer days and the episodic, working and procedural memories
(archived ones too) and keeps semantic memory and the foundation; `--all` removes every
memory file and keeps `kenomem.toml`. Only memory files move: the `*.md` files the scan
finds in the memory folders (not hidden, never through a symlink that leaves the vault),
the buffer days and, with `--all`, the foundation; none the vault's .gitignore excludes.
A picture or a PDF beside them stays where it is. A folder without the vault's marker
(`paths.MARKER`, written by `init`) is refused: it is not a vault.

Nothing is deleted at once: each file is renamed into `.kenomem/trash/<time>/`, after a
manifest of the plan is written there, so a reset killed half-way is finished by the next
one, and `reset --undo` moves the last reset back. Trash older than `reset.trash_days` is
emptied by the next reset or prune: only the folders a reset made (its manifest and
`done` there), and in them only the files the manifest lists, never through a symlink;
anything else found in the trash is left alone.
"""

from __future__ import annotations

import os
import stat
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from kenomem.errors import KenomemError, UnsafePath
from kenomem.files import buffer, ignore
from kenomem.files.atomic import write_bytes
from kenomem.files.paths import (
    ARCHIVE_DIR,
    FOUNDATION,
    MEMORY_DIRS,
    STATE_DIR,
    check_inside,
    move_inside,
    outside,
    require_marker,
)
from kenomem.files.scan import scan
from kenomem.vault.core import CoreVault

TRASH = "trash"
MANIFEST = "manifest.txt"
DONE = "done"  # written last: the reset is complete
_MEMORY_KINDS = ("episodic", "working", "procedural")
_SCOPE = "scope "  # the manifest's first line: `scope memory` or `scope all`


class ResetRequest(NamedTuple):
    everything: bool = False  # every memory (`--all`), not only those of `--memory`


class ResetResult(NamedTuple):
    action: str  # reset | undo
    scope: str  # memory | all
    files: int
    trash: str  # the trash folder, vault-relative
    conflicts: list[str]  # undo: files in the way, left in the trash
    emptied: int  # old trash folders removed


def targets(vault: CoreVault, everything: bool) -> list[str]:
    """The vault-relative memory files a reset removes."""
    folders = (
        MEMORY_DIRS
        if everything
        else (*_MEMORY_KINDS, *(f"{ARCHIVE_DIR}/{k}" for k in _MEMORY_KINDS))
    )
    within = tuple(f"{folder}/" for folder in folders)
    found = [path for path in scan(vault.root).files if path.startswith(within)]
    found += buffer.days(vault.root)
    here = not outside(vault.root, FOUNDATION) and os.path.lexists(vault.root / FOUNDATION)
    if everything and here:
        found.append(FOUNDATION)
    ignored = ignore.matcher(vault.ignore_rules)
    return sorted(path for path in found if not ignored(path))


def _trash_root(vault: CoreVault) -> Path:
    return vault.state_dir / TRASH


def reset(vault: CoreVault, request: ResetRequest, *, now: datetime | None = None) -> ResetResult:
    require_marker(vault.root, "reset")
    moment = now or datetime.now(UTC)
    everything = request.everything
    scope = "all" if everything else "memory"
    with vault.lock:
        trash = _unfinished(vault)
        if trash is not None:
            begun = _scope(trash)
            if begun != scope:
                raise KenomemError(
                    f"an interrupted `reset --{begun}` is unfinished; it comes first",
                    hint=f"finish it with `kenomem reset --{begun}`, "
                    "or bring back what it moved with `kenomem reset --undo`",
                )
        else:
            trash = _start(vault, moment, scope, targets(vault, everything))
        scope = _scope(trash)
        into = trash.relative_to(vault.root).as_posix()
        moved = 0
        for rel in _planned(trash):
            source, dest = vault.root / rel, f"{into}/{rel}"
            # A manifest may be older than a symlink put in since: checked again here.
            if outside(vault.root, rel) or not os.path.lexists(source):
                continue
            if not os.path.lexists(vault.root / dest):
                move_inside(vault.root, rel, dest)
                moved += 1
        (trash / DONE).write_text(moment.isoformat(), encoding="utf-8")
        emptied = empty_old_trash(vault, keep=trash)
    vault.sync()
    return ResetResult("reset", scope, moved, into, [], emptied)


def _start(vault: CoreVault, moment: datetime, scope: str, files: list[str]) -> Path:
    check_inside(vault.root, f"{STATE_DIR}/{TRASH}")  # the trash must not lead elsewhere
    trash = _trash_root(vault) / moment.strftime("%Y%m%dT%H%M%S")
    n = 1
    while os.path.lexists(trash):
        n += 1
        trash = trash.with_name(f"{moment:%Y%m%dT%H%M%S}-{n}")
    trash.mkdir(parents=True)
    manifest = "\n".join([f"{_SCOPE}{scope}", *files]) + "\n"
    write_bytes(trash / MANIFEST, manifest.encode("utf-8"), fsync=True)
    return trash


def _manifest(trash: Path) -> list[str] | None:
    """The manifest's lines (scope first), if `trash` holds one a reset wrote: a regular
    file (not a symlink) that starts with the scope."""
    path = trash / MANIFEST
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        lines = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    return lines if lines[0].startswith(_SCOPE) else None


def _scope(trash: Path) -> str:
    return (_manifest(trash) or [_SCOPE])[0].removeprefix(_SCOPE).strip()


def _planned(trash: Path) -> list[str]:
    """The vault-relative files the manifest lists."""
    return [rel for rel in (_manifest(trash) or [])[1:] if rel]


def _made_by_reset(trash: Path, finished: bool) -> bool:
    """Whether `trash` is a folder a reset made (its manifest there; `done` too, as a
    regular file, when `finished`)."""
    if _manifest(trash) is None:
        return False
    try:
        return stat.S_ISREG(os.lstat(trash / DONE).st_mode) is finished
    except FileNotFoundError:
        return not finished


def _unfinished(vault: CoreVault) -> Path | None:
    """A reset that was interrupted: it is finished before anything else."""
    for trash in _trashes(vault):
        if _made_by_reset(trash, finished=False):
            return trash
    return None


def _trashes(vault: CoreVault) -> list[Path]:
    """The folders in the trash (not symlinks), oldest first; none if the trash itself
    leads out of the vault."""
    if outside(vault.root, f"{STATE_DIR}/{TRASH}"):
        return []
    try:
        entries = list(os.scandir(_trash_root(vault)))
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
    return sorted(found, key=lambda p: p.name)


def empty_old_trash(vault: CoreVault, keep: Path | None = None) -> int:
    """Empty the trash of finished resets older than `reset.trash_days`; how many.

    Only what a reset put there goes: the files its manifest lists, the folders that
    held them once empty, then the manifest and `done`. Anything else stays, and so does
    a folder without a reset's manifest."""
    limit = time.time() - vault.settings.reset.trash_days * 86400
    emptied = 0
    with vault.lock:
        for trash in _trashes(vault):
            if trash == keep or not _made_by_reset(trash, finished=True):
                continue
            if os.lstat(trash / DONE).st_mtime < limit:
                _discard(trash, _planned(trash))
                emptied += 1
    return emptied


def _discard(trash: Path, listed: list[str]) -> None:
    """Remove from `trash` the files of `listed` (a symlink is removed, not followed; a
    folder on the way that is a symlink stops it), the folders that held them once they
    are empty, then the manifest and `done`, and `trash` itself if nothing else is left."""
    folders: set[Path] = set()
    for rel in listed:
        if outside(trash, rel, follow_last=False):
            continue
        path = trash / rel
        folders.update(p for p in path.parents if trash in p.parents)
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                os.unlink(path)
        except FileNotFoundError:
            pass
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        _remove_empty(folder)
    for name in (DONE, MANIFEST):
        try:
            os.unlink(trash / name)
        except FileNotFoundError:
            pass
    _remove_empty(trash)


def _remove_empty(folder: Path) -> None:
    try:
        os.rmdir(folder)  # only an empty folder; a symlink is not one
    except OSError:
        pass


def undo(vault: CoreVault) -> ResetResult:
    """Move the files of the last reset back where they were; never over a file, nor
    into a folder that now leads out of the vault (such a file stays in the trash)."""
    with vault.lock:
        done = [t for t in _trashes(vault) if _manifest(t) is not None]
        if not done:
            raise KenomemError(
                "there is no reset to undo", hint=f"the trash is {STATE_DIR}/{TRASH}/"
            )
        trash = done[-1]
        scope = _scope(trash)
        planned = _planned(trash)
        into = trash.relative_to(vault.root).as_posix()
        moved, conflicts = 0, []
        for rel in planned:
            source = f"{into}/{rel}"
            if outside(vault.root, source, follow_last=False):
                continue
            if not os.path.lexists(vault.root / source):
                continue
            if os.path.lexists(vault.root / rel):
                conflicts.append(rel)
                continue
            try:
                move_inside(vault.root, source, rel)
            except UnsafePath:
                conflicts.append(rel)
                continue
            moved += 1
        if not conflicts:
            _discard(trash, planned)
    vault.sync()
    return ResetResult("undo", scope, moved, into, conflicts, 0)
