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

The trash, its folders, the manifest and `done` are opened in `.kenomem/` held by
descriptor (`beneath.private`, `paths.read_private`, `write_private`), never through a
link: a manifest or `done` that is a symlink is no reset's, a link in the trash's place
is `UnsafePath` for `reset` and `--undo` (nothing is moved) and holds nothing to empty.
"""

from __future__ import annotations

import os
import stat
import time
from datetime import UTC, datetime
from typing import NamedTuple

from kenomem.errors import KenomemError, UnsafePath
from kenomem.files import beneath, buffer, ignore
from kenomem.files.paths import (
    ARCHIVE_DIR,
    FOUNDATION,
    MEMORY_DIRS,
    STATE_DIR,
    move_inside,
    outside,
    read_private,
    require_marker,
    write_private,
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


def _in_trash(name: str, rel: str = "") -> str:
    """The path, relative to `.kenomem/`, of the reset folder `name` (or of `rel` in it)."""
    return f"{TRASH}/{name}/{rel}" if rel else f"{TRASH}/{name}"


def reset(vault: CoreVault, request: ResetRequest, *, now: datetime | None = None) -> ResetResult:
    require_marker(vault.root, "reset")
    moment = now or datetime.now(UTC)
    everything = request.everything
    scope = "all" if everything else "memory"
    with vault.lock:
        name = _unfinished(vault)
        if name is not None:
            begun = _scope(vault, name)
            if begun != scope:
                raise KenomemError(
                    f"an interrupted `reset --{begun}` is unfinished; it comes first",
                    hint=f"finish it with `kenomem reset --{begun}`, "
                    "or bring back what it moved with `kenomem reset --undo`",
                )
        else:
            name = _start(vault, moment, scope, targets(vault, everything))
        scope = _scope(vault, name)
        into = f"{STATE_DIR}/{_in_trash(name)}"
        moved = 0
        for rel in _planned(vault, name):
            source, dest = vault.root / rel, f"{into}/{rel}"
            # A manifest may be older than a symlink put in since: checked again here.
            if outside(vault.root, rel) or not os.path.lexists(source):
                continue
            if not os.path.lexists(vault.root / dest):
                move_inside(vault.root, rel, dest)
                moved += 1
        done = moment.isoformat().encode("utf-8")
        write_private(vault.state_dir, _in_trash(name, DONE), done, fsync=False)
        emptied = empty_old_trash(vault, keep=name)
    vault.sync()
    return ResetResult("reset", scope, moved, into, [], emptied)


def _start(vault: CoreVault, moment: datetime, scope: str, files: list[str]) -> str:
    """A new reset folder in the trash, with the manifest of its plan; its name."""
    name = moment.strftime("%Y%m%dT%H%M%S")
    # The trash must be a real folder of the user's own: never one that leads elsewhere.
    with beneath.private(vault.state_dir, TRASH) as trash:
        n = 1
        while True:
            try:
                os.mkdir(name, 0o700, dir_fd=trash.fd)
                break
            except FileExistsError:  # a reset of the same second, or anything else there
                n += 1
                name = f"{moment:%Y%m%dT%H%M%S}-{n}"
    manifest = "\n".join([f"{_SCOPE}{scope}", *files]) + "\n"
    write_private(vault.state_dir, _in_trash(name, MANIFEST), manifest.encode("utf-8"))
    return name


def _manifest(vault: CoreVault, name: str) -> list[str] | None:
    """The manifest's lines (scope first), if the reset folder `name` holds one a reset
    wrote: a file (not a symlink, nor in a folder that is one) that starts with the
    scope."""
    try:
        text = read_private(vault.state_dir, _in_trash(name, MANIFEST)).decode("utf-8")
    except (OSError, UnicodeDecodeError, UnsafePath):
        return None
    lines = text.split("\n")
    return lines if lines[0].startswith(_SCOPE) else None


def _scope(vault: CoreVault, name: str) -> str:
    return (_manifest(vault, name) or [_SCOPE])[0].removeprefix(_SCOPE).strip()


def _planned(vault: CoreVault, name: str) -> list[str]:
    """The vault-relative files the manifest lists."""
    return [rel for rel in (_manifest(vault, name) or [])[1:] if rel]


def _done(vault: CoreVault, name: str) -> os.stat_result | None:
    """The stat of the reset folder's `done` (not followed), None when it has none."""
    try:
        with beneath.private(vault.state_dir, _in_trash(name), create=False) as folder:
            return os.stat(DONE, dir_fd=folder.fd, follow_symlinks=False)
    except (OSError, UnsafePath):
        return None


def _made_by_reset(vault: CoreVault, name: str, finished: bool) -> bool:
    """Whether the trash's folder `name` is one a reset made (its manifest there), and
    `finished` (with `done`, a regular file) or not (without: `done` missing, or a link
    or anything else, which the finishing reset replaces)."""
    if _manifest(vault, name) is None:
        return False
    done = _done(vault, name)
    return (done is not None and stat.S_ISREG(done.st_mode)) is finished


def _unfinished(vault: CoreVault) -> str | None:
    """A reset that was interrupted: it is finished before anything else."""
    for name in _trashes(vault):
        if _made_by_reset(vault, name, finished=False):
            return name
    return None


def _trashes(vault: CoreVault) -> list[str]:
    """The names of the folders in the trash (not symlinks), oldest first. A trash that
    is not a real folder of the user's own is `UnsafePath` (`beneath.private`)."""
    try:
        with beneath.private(vault.state_dir, TRASH, create=False) as trash:
            entries = list(os.scandir(trash.fd))
    except FileNotFoundError:
        return []
    return sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))


def empty_old_trash(vault: CoreVault, keep: str | None = None) -> int:
    """Empty the trash of finished resets older than `reset.trash_days`; how many.

    Only what a reset put there goes: the files its manifest lists, the folders that
    held them once empty, then the manifest and `done`. Anything else stays, and so does
    a folder without a reset's manifest, and a trash that is a link (nothing a reset
    put there)."""
    limit = time.time() - vault.settings.reset.trash_days * 86400
    emptied = 0
    with vault.lock:
        try:
            names = _trashes(vault)
        except UnsafePath:
            return 0
        for name in names:
            if name == keep or not _made_by_reset(vault, name, finished=True):
                continue
            done = _done(vault, name)
            if done is not None and done.st_mtime < limit:
                _discard(vault, name, _planned(vault, name))
                emptied += 1
    return emptied


def _discard(vault: CoreVault, name: str, listed: list[str]) -> None:
    """Remove from the reset folder `name` the files of `listed` (a symlink is removed,
    not followed; a folder on the way that is a symlink stops it), the folders that held
    them once they are empty, then the manifest and `done`, and the reset folder itself
    if nothing else is left. Each is removed from its folder held by descriptor."""
    folders: set[str] = set()
    for rel in listed:
        where, file = beneath.split(rel)
        try:
            with beneath.private(vault.state_dir, _in_trash(name, where), create=False) as held:
                if not stat.S_ISDIR(beneath.lstat_in(held, file).st_mode):
                    os.unlink(file, dir_fd=held.fd)
        except (OSError, UnsafePath):
            pass  # gone, or out of reach (a link on the way, a name that leaves the trash)
        parts = where.split("/") if where else []
        folders.update("/".join(parts[: n + 1]) for n in range(len(parts)))
    for folder in sorted(folders, key=lambda f: f.count("/"), reverse=True):
        _remove_empty(vault, _in_trash(name, folder))
    for marker in (DONE, MANIFEST):
        try:
            with beneath.private(vault.state_dir, _in_trash(name), create=False) as held:
                os.unlink(marker, dir_fd=held.fd)
        except (OSError, UnsafePath):
            pass
    _remove_empty(vault, _in_trash(name))


def _remove_empty(vault: CoreVault, rel: str) -> None:
    """Remove the folder `rel` of `.kenomem/` if it is empty (a symlink is not one)."""
    where, name = beneath.split(rel)
    try:
        with beneath.private(vault.state_dir, where, create=False) as parent:
            os.rmdir(name, dir_fd=parent.fd)
    except (OSError, UnsafePath):
        pass


def undo(vault: CoreVault) -> ResetResult:
    """Move the files of the last reset back where they were; never over a file, nor
    into a folder that now leads out of the vault (such a file stays in the trash)."""
    with vault.lock:
        done = [name for name in _trashes(vault) if _manifest(vault, name) is not None]
        if not done:
            raise KenomemError(
                "there is no reset to undo", hint=f"the trash is {STATE_DIR}/{TRASH}/"
            )
        name = done[-1]
        scope = _scope(vault, name)
        planned = _planned(vault, name)
        into = f"{STATE_DIR}/{_in_trash(name)}"
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
            _discard(vault, name, planned)
    vault.sync()
    return ResetResult("undo", scope, moved, into, conflicts, 0)
