"""`reset`: start over, with a way back.

`--memory` removes the buffer days and the episodic, working and procedural memories
(archived ones too) and keeps semantic memory and the foundation; `--all` removes every
memory file and keeps `kenomem.toml`. Only memory files move: the `*.md` files the scan
finds in the memory folders (not hidden, never through a symlink that leaves the vault),
the buffer days and, with `--all`, the foundation; none the vault's .gitignore excludes.
A picture or a PDF beside them stays where it is. A folder without the vault's marker
(`paths.MARKER`, written by `init`) is refused: it is not a vault.

Nothing is deleted at once: each file is renamed into the trash, `archive/.reset/<time>/`,
after a manifest of the plan is written there, so a reset killed half-way is finished by
the next one, and `reset --undo` moves the last reset back. Trash older than
`reset.trash_days` is emptied by the next reset or prune: only the folders a reset made
(its manifest and `done` there), and in them only the files the manifest lists, never
through a symlink; anything else found in the trash is left alone.

The trash is part of the vault, not of `.kenomem/`, so that deleting `.kenomem/` (derived,
rebuilt by the next command) never takes the way back with it. Its name is hidden, so the
scan, the index, the watcher and `doctor` pass over it as over every hidden name; `sync`
never commits it (a hidden name is none of the vault's own files) and refuses one a remote
brings; and its own `.gitignore` (`*`) keeps it out of a `git add` made by hand, whatever
the vault's rules. A trash an older version left in `.kenomem/trash/` is moved into it by
the next reset, undo or prune (`adopt_old_trash`).

The trash is held by descriptor: `archive/` is walked from the vault as every memory folder
is (`beneath.folder`), then `.reset` and each folder in it is opened without following a
link and must be a real folder of this user's, closed to others (0700): a link, a file or
another user's folder there is `UnsafePath` for `reset` and `--undo` (nothing is moved)
and holds nothing to empty for `prune`. Files are renamed between folders so held; the
manifest and `done` are read and written in theirs, never through a link (a manifest or
`done` that is a symlink is no reset's). A manifest's lines count only when they name a
file a reset may take (`resettable`): a manifest someone else wrote moves nothing else.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from datetime import UTC, datetime
from typing import NamedTuple

from kenomem.errors import KenomemError, UnsafePath
from kenomem.files import beneath, buffer, ignore
from kenomem.files.atomic import write_bytes
from kenomem.files.paths import (
    ARCHIVE_DIR,
    BUFFER_DIR,
    FOUNDATION,
    MEMORY_DIRS,
    outside,
    read_private,
    require_marker,
)
from kenomem.files.scan import scan
from kenomem.index import leftovers
from kenomem.vault.core import CoreVault

RESET_DIR = ".reset"  # in archive/: hidden, so no scan, index or sync takes it
TRASH_DIR = f"{ARCHIVE_DIR}/{RESET_DIR}"  # vault-relative
OLD_TRASH = "trash"  # in .kenomem/, where earlier versions kept it
MANIFEST = "manifest.txt"
DONE = "done"  # written last: the reset is complete
SHIELD = ".gitignore"  # the trash's own: git leaves out all it holds
SHIELD_TEXT = (
    b"# What `kenomem reset` removed, kept for `kenomem reset --undo`: never shared.\n"
    b"# git leaves out everything in this folder, this file too.\n"
    b"*\n"
)
_MEMORY_KINDS = ("episodic", "working", "procedural")
_SCOPE = "scope "  # the manifest's first line: `scope memory` or `scope all`
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | beneath.NOFOLLOW
_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | beneath.NOFOLLOW
# What opening a name with O_NOFOLLOW | O_DIRECTORY gives for a symlink or a file.
_NOT_A_FOLDER = (errno.ELOOP, errno.EMLINK, errno.ENOTDIR)


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


def resettable(rel: str) -> bool:
    """Whether the vault-relative `rel` is a file a reset may take, and so one a manifest
    may name: a `*.md` file in a memory folder, a buffer day, or the foundation; no part
    of it empty, `.`, `..` or hidden (the trash itself among them). Pure."""
    if rel == FOUNDATION:
        return True
    parts = rel.split("/")
    if len(parts) < 2 or not rel.endswith(".md") or "\0" in rel:
        return False
    if any(not part or part.startswith(".") for part in parts):
        return False
    return parts[0] in MEMORY_DIRS or (parts[0] == BUFFER_DIR and len(parts) == 2)


def reset(vault: CoreVault, request: ResetRequest, *, now: datetime | None = None) -> ResetResult:
    require_marker(vault.root, "reset")
    moment = now or datetime.now(UTC)
    everything = request.everything
    scope = "all" if everything else "memory"
    with vault.lock:
        adopt_old_trash(vault)
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
        moved = 0
        for rel in _planned(vault, name):
            # A manifest may be older than a symlink put in since: checked again here.
            if outside(vault.root, rel) or not os.path.lexists(vault.root / rel):
                continue
            if _into_trash(vault, name, rel):
                moved += 1
        done = moment.isoformat().encode("utf-8")
        _write(vault, name, DONE, done, fsync=False)
        emptied = empty_old_trash(vault, keep=name)
    vault.sync()
    return ResetResult("reset", scope, moved, f"{TRASH_DIR}/{name}", [], emptied)


def _start(vault: CoreVault, moment: datetime, scope: str, files: list[str]) -> str:
    """A new reset folder in the trash, with the manifest of its plan; its name."""
    name = moment.strftime("%Y%m%dT%H%M%S")
    # The trash must be a real folder of the user's own: never one that leads elsewhere.
    with _trash(vault, create=True) as trash:
        _shield(trash)
        n = 1
        while True:
            try:
                os.mkdir(name, 0o700, dir_fd=trash.fd)
                break
            except FileExistsError:  # a reset of the same second, or anything else there
                n += 1
                name = f"{moment:%Y%m%dT%H%M%S}-{n}"
    manifest = "\n".join([f"{_SCOPE}{scope}", *files]) + "\n"
    _write(vault, name, MANIFEST, manifest.encode("utf-8"))
    return name


# -- the trash, held by descriptor --------------------------------------------------------


def _trash(vault: CoreVault, rel: str = "", *, create: bool = False) -> beneath.Folder:
    """The trash, or the folder `rel` in it, held by descriptor: `archive/` walked from
    the vault (`beneath.folder`), then each name from `.reset` on opened without following
    a link (see the module's docstring); with `create`, the folders missing on the way are
    made, 0700. `FileNotFoundError` when one is missing; `UnsafePath` for a link, a file
    or another user's folder on the way."""
    parts = [RESET_DIR, *(rel.split("/") if rel else [])]
    if any(part in ("", ".", "..") for part in parts):
        raise beneath.outside_error(f"{TRASH_DIR}/{rel}")
    with beneath.folder(vault.root, ARCHIVE_DIR, create=create) as archive:
        fd = os.dup(archive.fd)
    path = vault.root / ARCHIVE_DIR
    try:
        for part in parts:
            path = path / part
            child = _held(fd, part, path, create)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return beneath.Folder(fd, path)


def _held(parent: int, name: str, path: os.PathLike[str], create: bool) -> int:
    """A descriptor of the folder `name` in `parent` (named `path` in messages): a real
    folder of this user's, closed to others; made first when missing and `create`."""
    try:
        fd = os.open(name, _DIR, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path)) from None
        try:
            os.mkdir(name, 0o700, dir_fd=parent)
        except FileExistsError:
            pass  # made meanwhile by another process
        return _held(parent, name, path, create=False)
    except OSError as exc:
        if exc.errno in _NOT_A_FOLDER:
            raise _not_a_folder(path) from None
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    try:
        st = os.fstat(fd)
        if os.name == "posix" and st.st_uid != os.geteuid():
            raise UnsafePath(
                f"{path} belongs to another user (uid {st.st_uid}); kenomem keeps what a "
                "reset removed only in a folder of its user's own",
                hint=f"if it is yours, take it back (chown -R {os.geteuid()} {path}); if not, "
                "move it out of the vault, then run the command again",
            )
        if os.name == "posix" and st.st_mode & 0o077:
            try:
                os.fchmod(fd, 0o700)  # what a reset removed is its owner's alone
            except OSError:
                pass  # a file system without modes (FAT, some network shares)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _not_a_folder(path: os.PathLike[str]) -> UnsafePath:
    return UnsafePath(
        f"{path} is not a folder of the trash's own (a symlink or a file): kenomem keeps "
        "what a reset removed in a real folder and never moves a file through a link",
        hint=f"move it out of the way (mv {path} {path}.moved), then run the command again",
    )


def _join(name: str, rel: str) -> str:
    return f"{name}/{rel}" if rel else name


def _there(folder: beneath.Folder, name: str) -> os.stat_result | None:
    """The stat of `name` in `folder` (a link not followed); None when it is not there."""
    try:
        return os.stat(name, dir_fd=folder.fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _shield(trash: beneath.Folder) -> None:
    """Write the trash's `.gitignore`, unless it is there as written (a link in its place
    is replaced, never written through)."""
    try:
        fd = os.open(SHIELD, _READ, dir_fd=trash.fd)
    except OSError:
        pass
    else:
        with open(fd, "rb") as handle:
            if stat.S_ISREG(os.fstat(fd).st_mode) and handle.read(4096) == SHIELD_TEXT:
                return
    write_bytes(trash.path / SHIELD, SHIELD_TEXT, folder=trash)


def _write(vault: CoreVault, name: str, file: str, data: bytes, *, fsync: bool = True) -> None:
    """Write `file` (the manifest or `done`) in the reset folder `name`, atomically; the
    temporary file of such a write a killed run left there goes too (the run that
    finishes the reset finishes its writes)."""
    with _trash(vault, name, create=True) as folder:
        write_bytes(folder.path / file, data, fsync=fsync, folder=folder)
        for entry in os.listdir(folder.fd):
            if entry.startswith(".") and leftovers.dead_temporary(entry):
                beneath.remove_in(folder, entry)


def _into_trash(vault: CoreVault, name: str, rel: str) -> bool:
    """Move the vault's file `rel` (a symlink as the link) into the reset folder `name`;
    False when the trash holds it already."""
    where, file = beneath.split(rel)
    with (
        beneath.folder(vault.root, where) as source,
        _trash(vault, _join(name, where), create=True) as into,
    ):
        if _there(into, file) is not None:
            return False
        try:
            os.rename(file, file, src_dir_fd=source.fd, dst_dir_fd=into.fd)
        except OSError as exc:
            raise type(exc)(exc.errno, exc.strerror, str(vault.root / rel)) from None
    return True


def _out_of_trash(vault: CoreVault, held: beneath.Folder, rel: str) -> bool:
    """Move the file `rel` from the trash's folder `held` back into the vault, never over
    a file (False then), its folders made as needed. `UnsafePath` when a folder on the way
    now leads out of the vault."""
    where, file = beneath.split(rel)
    with beneath.folder(vault.root, where, create=True) as into:
        try:
            if _there(into, file) is not None:
                beneath.remove_made(vault.root, into.made)
                return False
            os.rename(file, file, src_dir_fd=held.fd, dst_dir_fd=into.fd)
        except BaseException:
            beneath.remove_made(vault.root, into.made)
            raise
    return True


# -- the reset folders --------------------------------------------------------------------


def _manifest(vault: CoreVault, name: str) -> list[str] | None:
    """The manifest's lines (scope first), if the reset folder `name` holds one a reset
    wrote: a regular file (not a symlink, nor in a folder that is one) that starts with
    the scope."""
    try:
        with _trash(vault, name) as folder:
            fd = os.open(MANIFEST, _READ, dir_fd=folder.fd)
        with open(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            text = handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError, UnsafePath):
        return None
    lines = text.split("\n")
    return lines if lines[0].startswith(_SCOPE) else None


def _scope(vault: CoreVault, name: str) -> str:
    return (_manifest(vault, name) or [_SCOPE])[0].removeprefix(_SCOPE).strip()


def _planned(vault: CoreVault, name: str) -> list[str]:
    """The vault-relative files the manifest lists (only those a reset may take)."""
    return [rel for rel in (_manifest(vault, name) or [])[1:] if resettable(rel)]


def _done(vault: CoreVault, name: str) -> os.stat_result | None:
    """The stat of the reset folder's `done` (not followed), None when it has none."""
    try:
        with _trash(vault, name) as folder:
            return _there(folder, DONE)
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


def _order(name: str) -> tuple[str, int, str]:
    """Resets in the order they were made: `<time>`, then `<time>-2`, ..., `<time>-10`."""
    stem, _, n = name.partition("-")
    return stem, int(n) if n.isascii() and n.isdigit() else 0, name


def _trashes(vault: CoreVault) -> list[str]:
    """The names of the folders in the trash (not symlinks), oldest first. A trash that
    is not a real folder of the user's own is `UnsafePath` (`_trash`)."""
    try:
        with _trash(vault) as trash:
            entries = list(os.scandir(trash.fd))
    except FileNotFoundError:
        return []
    return sorted((e.name for e in entries if e.is_dir(follow_symlinks=False)), key=_order)


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
            adopt_old_trash(vault)
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
        if emptied:
            _tidy(vault)
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
            with _trash(vault, _join(name, where)) as held:
                if not stat.S_ISDIR(beneath.lstat_in(held, file).st_mode):
                    os.unlink(file, dir_fd=held.fd)
        except (OSError, UnsafePath):
            pass  # gone, or out of reach (a link on the way)
        parts = where.split("/") if where else []
        folders.update("/".join(parts[: n + 1]) for n in range(len(parts)))
    for folder in sorted(folders, key=lambda f: f.count("/"), reverse=True):
        _remove_empty(vault, _join(name, folder))
    for marker in (DONE, MANIFEST):
        try:
            with _trash(vault, name) as held:
                os.unlink(marker, dir_fd=held.fd)
        except (OSError, UnsafePath):
            pass
    _remove_empty(vault, name)


def _remove_empty(vault: CoreVault, rel: str) -> None:
    """Remove the folder `rel` of the trash if it is empty (a symlink is not one)."""
    where, name = beneath.split(rel)
    try:
        with _trash(vault, where) as parent:
            os.rmdir(name, dir_fd=parent.fd)
    except (OSError, UnsafePath):
        pass


def _tidy(vault: CoreVault) -> None:
    """Remove the trash once it holds no reset: `.reset` with nothing but its `.gitignore`
    (a vault whose resets were all undone or emptied is as it was before them)."""
    try:
        with beneath.folder(vault.root, ARCHIVE_DIR) as archive, _trash(vault) as trash:
            left = os.listdir(trash.fd)
            if left and left != [SHIELD]:
                return
            if left:
                os.unlink(SHIELD, dir_fd=trash.fd)
            os.rmdir(RESET_DIR, dir_fd=archive.fd)
    except (OSError, UnsafePath):
        pass


def adopt_old_trash(vault: CoreVault) -> int:
    """Move into the trash the reset folders an older version left in `.kenomem/trash/`
    (each one with a reset's manifest; anything else there stays), so that deleting
    `.kenomem/` no longer takes them; how many. A `.kenomem/trash` that is a link, a file
    or another user's folder is no trash a reset made: nothing is moved from it. Each
    folder is renamed whole, between the two folders held by descriptor (what it holds,
    links included, is not opened)."""
    try:
        old = beneath.private(vault.state_dir, OLD_TRASH, create=False)
    except (OSError, UnsafePath):
        return 0  # none (the usual case), or not one a reset made
    with old:
        try:
            entries = list(os.scandir(old.fd))
        except OSError:
            return 0
        names = sorted((e.name for e in entries if e.is_dir(follow_symlinks=False)), key=_order)
        names = [name for name in names if _old_manifest(vault, name)]
        if names:
            with _trash(vault, create=True) as trash:
                _shield(trash)
                for name in names:
                    _adopt(old, trash, name)
    try:  # gone once empty: nothing of the user's is left in .kenomem/
        with beneath.private(vault.state_dir, create=False) as state:
            os.rmdir(OLD_TRASH, dir_fd=state.fd)
    except (OSError, UnsafePath):
        pass
    return len(names)


def _old_manifest(vault: CoreVault, name: str) -> bool:
    try:
        text = read_private(vault.state_dir, f"{OLD_TRASH}/{name}/{MANIFEST}")
    except (OSError, UnsafePath):
        return False
    return text.startswith(_SCOPE.encode())


def _adopt(old: beneath.Folder, trash: beneath.Folder, name: str) -> None:
    """Rename the old trash's folder `name` into the trash, under a name not taken."""
    new, n = name, 1
    while _there(trash, new) is not None:
        n += 1
        new = f"{name}-{n}"
    try:
        os.rename(name, new, src_dir_fd=old.fd, dst_dir_fd=trash.fd)
    except OSError as exc:
        source, dest = old.path / name, trash.path / new
        raise KenomemError(
            f"the trash of an earlier reset, {source}, could not be moved to {dest}: "
            f"{exc.strerror}",
            hint=f"move it there yourself (mv {source} {dest}), then run the command again",
        ) from None


def undo(vault: CoreVault) -> ResetResult:
    """Move the files of the last reset back where they were; never over a file, nor
    into a folder that now leads out of the vault (such a file stays in the trash)."""
    with vault.lock:
        adopt_old_trash(vault)
        done = [name for name in _trashes(vault) if _manifest(vault, name) is not None]
        if not done:
            raise KenomemError(
                "there is no reset to undo",
                hint=f"what a reset removes waits in {TRASH_DIR}/ until "
                f"reset.trash_days ({vault.settings.reset.trash_days:g}) have passed; "
                "nothing is there",
            )
        name = done[-1]
        scope = _scope(vault, name)
        planned = _planned(vault, name)
        moved, conflicts = 0, []
        for rel in planned:
            where, file = beneath.split(rel)
            try:
                held = _trash(vault, _join(name, where))
            except (OSError, UnsafePath):
                continue  # not there, or not reached without following a link
            with held:
                found = _there(held, file)
                if found is None or stat.S_ISDIR(found.st_mode):
                    continue  # a folder is nothing a reset moved
                try:
                    back = _out_of_trash(vault, held, rel)
                except UnsafePath:
                    back = False  # its folder now leads out of the vault
            if back:
                moved += 1
            else:
                conflicts.append(rel)
        if not conflicts:
            _discard(vault, name, planned)
            _tidy(vault)
    vault.sync()
    return ResetResult("undo", scope, moved, f"{TRASH_DIR}/{name}", conflicts, 0)
