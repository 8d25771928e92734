"""Writes that are all-or-nothing: a temporary file, then a rename over the target.

Every write works in folders held by descriptor (`beneath.Folder`): the temporary file is
made in one (`O_CREAT | O_EXCL | O_NOFOLLOW`, never through a link), renamed into the
target's folder by name relative to both descriptors, and that folder is fsynced through
its descriptor; so a folder swapped for a symlink meanwhile cannot send the write
elsewhere. The vault's writers pass folders walked from the vault (`beneath.folder`,
`beneath.private`: see `store` and `buffer`); given only a path, the write opens the
target's folder as named, a path its caller vouches for (the user's configuration folder,
a file git names).

The temporary file goes in `temp_dir` when the caller gives one on the same file system
(the vault's `.kenomem/tmp/`): creating a file in a folder of thousands costs far more
than in a small one, and watchers and editors of the memory folders never see it. When
a rename across folders is refused, the temporary file is made next to the target.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

from kenomem.errors import KenomemError
from kenomem.files.beneath import NOFOLLOW, Folder, lstat_in

_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW


class DirtyFile(KenomemError):
    """The file changed on disk between our read and our write; our write was dropped."""


def temp_name(target: Path, temp_dir: Path | None = None) -> Path:
    # Hidden, so vault scans and editors' file lists pass over it.
    name = f".{target.name}.{os.getpid()}.{os.urandom(3).hex()}.tmp"
    return (temp_dir or target.parent) / name


def write_bytes(
    target: Path,
    data: bytes,
    *,
    fsync: bool = True,
    sync_dir: bool = True,
    expect_stat: tuple[int, int] | None = None,
    temp_dir: Path | Folder | None = None,
    before_replace: Callable[[os.stat_result], None] | None = None,
    folder: Folder | None = None,
) -> os.stat_result:
    """Atomically replace `target` with `data` and return the new file's stat.

    With `folder`, `target` is the file `target.name` in that folder (its whole path
    named in messages); otherwise its folder is opened as named, and made if missing.

    With `fsync`, the data is on disk before the rename, so a crash leaves the old file or
    the new one, never an empty one; `sync_dir` also makes the rename itself durable
    (worth it for new content, not for an access count).

    `expect_stat` is the (size, mtime_ns) the caller read; if the file no longer has it
    when we are about to replace it, someone edited it meanwhile and we raise `DirtyFile`
    rather than lose their change.

    `before_replace` learns the new file's stat just before it takes the target's place
    (so that a record of the write can precede the write's file system event).
    """
    made: list[Path] = []
    if folder is None:
        if not target.parent.is_dir():
            made = make_folders(target.parent)
        try:
            where = _open_folder(target.parent)
        except BaseException:
            remove_empty(made)
            raise
    else:
        where = folder
    try:
        return _replace(where, target, data, fsync, sync_dir, expect_stat, temp_dir, before_replace)
    except BaseException:
        remove_empty(made)
        raise
    finally:
        if folder is None:
            where.close()


def _replace(
    where: Folder,
    target: Path,
    data: bytes,
    fsync: bool,
    sync_dir: bool,
    expect_stat: tuple[int, int] | None,
    temp_dir: Path | Folder | None,
    before_replace: Callable[[os.stat_result], None] | None,
) -> os.stat_result:
    name = target.name
    try:
        st = lstat_in(where, name)
        mode = 0o644 if stat.S_ISLNK(st.st_mode) else st.st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    with _Temp(where, target, temp_dir, mode) as tmp:
        _write_all(tmp.fd, data, fsync, target)
        written = os.fstat(tmp.fd)
        tmp.close()
        if expect_stat is not None and _stat_key(where, name) != expect_stat:
            raise DirtyFile(f"{target} changed while kenomem was updating it; left as it is")
        if before_replace is not None:
            before_replace(written)
        try:
            tmp.rename_to(name)
        except OSError as exc:
            if exc.errno != errno.EXDEV or tmp.beside:
                raise _named(exc, target) from None
            tmp.discard()  # another file system: write beside the target instead
            return _replace(
                where, target, data, fsync, sync_dir, expect_stat, where, before_replace
            )
    if fsync and sync_dir:
        _fsync_fd(where.fd)
    return written


class _Temp:
    """A new temporary file for `target`: in `temp_dir` when given, else beside it."""

    def __init__(
        self, where: Folder, target: Path, temp_dir: Path | Folder | None, mode: int
    ) -> None:
        self.where = where
        self.beside = temp_dir is None or temp_dir is where
        self.owned: Folder | None = None
        if isinstance(temp_dir, Path):
            self.owned = temp_folder = _open_folder(temp_dir, make=True, named=target)
        else:
            temp_folder = temp_dir or where
        self.folder = temp_folder
        self.name = temp_name(target).name
        self.fd = -1
        try:
            self.fd = _open_new(temp_folder, self.name, mode)
        except BaseException:
            self._close_folder()
            raise
        self.linked = False

    def close(self) -> None:
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)

    def rename_to(self, name: str) -> None:
        os.replace(self.name, name, src_dir_fd=self.folder.fd, dst_dir_fd=self.where.fd)
        self.linked = True

    def link_to(self, name: str) -> None:
        # link() fails if the target exists, which rename() would silently overwrite.
        os.link(self.name, name, src_dir_fd=self.folder.fd, dst_dir_fd=self.where.fd)

    def discard(self) -> None:
        self.close()
        if not self.linked:
            try:
                os.unlink(self.name, dir_fd=self.folder.fd)
            except FileNotFoundError:
                pass
            self.linked = True  # nothing left to remove

    def _close_folder(self) -> None:
        if self.owned is not None:
            self.owned.close()
            self.owned = None

    def __enter__(self) -> _Temp:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.discard()
        finally:
            self._close_folder()


def _write_all(fd: int, data: bytes, fsync: bool, target: Path) -> None:
    """Write all of `data` (and fsync it); an error names `target`, the file the data is
    for, since a write to a descriptor names none."""
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if fsync:
            os.fsync(fd)
    except OSError as exc:
        if exc.filename is None:
            exc.filename = str(target)
        raise


def create_bytes(
    target: Path,
    data: bytes,
    *,
    fsync: bool = True,
    temp_dir: Path | Folder | None = None,
    sync_dir: bool = True,
    folder: Folder | None = None,
) -> os.stat_result:
    """Atomically create `target`; raise FileExistsError if it already exists (a symlink
    there too: never followed).

    With `folder`, `target` is the file `target.name` in that folder; otherwise its folder
    is opened as named, and made if missing. Without `sync_dir` the data is still on disk
    before the link, and the caller makes the folder durable itself (`fsync_dir`), once
    for many files. A failed create leaves nothing: no temporary file, and no folder it
    made for the target."""
    made: list[Path] = []
    if folder is None:
        made = make_folders(target.parent)
    try:
        where = folder or _open_folder(target.parent)
        try:
            return _create(where, target, data, fsync, temp_dir, sync_dir)
        finally:
            if folder is None:
                where.close()
    except BaseException:
        remove_empty(made)
        raise


def _create(
    where: Folder,
    target: Path,
    data: bytes,
    fsync: bool,
    temp_dir: Path | Folder | None,
    sync_dir: bool,
) -> os.stat_result:
    name = target.name
    with _Temp(where, target, temp_dir, 0o644) as tmp:
        _write_all(tmp.fd, data, fsync, target)
        tmp.close()
        try:
            tmp.link_to(name)
        except FileExistsError:
            raise _named(FileExistsError(errno.EEXIST, "File exists"), target) from None
        except OSError as exc:
            if exc.errno == errno.EXDEV and not tmp.beside:
                tmp.discard()  # another file system: write beside the target instead
                return _create(where, target, data, fsync, where, sync_dir)
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                raise _named(exc, target) from None
            # No hard links on this file system: callers hold the vault lock, so a
            # check then a rename is exclusive among kenomem processes.
            if _stat_key(where, name) is not None:
                raise _named(FileExistsError(errno.EEXIST, "File exists"), target) from None
            tmp.rename_to(name)
    if fsync and sync_dir:
        _fsync_fd(where.fd)
    return lstat_in(where, name)


def append_bytes(
    target: Path,
    data: bytes,
    *,
    fsync: bool = True,
    create: bool = False,
    folder: Folder | None = None,
) -> None:
    """Append `data` to the file `target` (FileNotFoundError if there is none, unless
    `create`): all of it, or nothing. A write cut short (a full disk) is cut back off, so
    the file ends where it did and a later append does not run on from a torn one. Never
    through a symlink; with `folder`, `target` is the file `target.name` in it.
    Callers hold the vault lock: appends of other kenomem processes wait for it."""
    flags = os.O_WRONLY | os.O_APPEND | NOFOLLOW | (os.O_CREAT if create else 0)
    try:
        if folder is None:
            fd = os.open(target, flags, 0o644)
        else:
            fd = os.open(target.name, flags, 0o644, dir_fd=folder.fd)
    except OSError as exc:
        raise _named(exc, target) from None
    try:
        end = os.fstat(fd).st_size
        try:
            _write_all(fd, data, fsync, target)
        except BaseException:
            try:
                os.ftruncate(fd, end)
            except OSError:
                pass
            raise
    finally:
        os.close(fd)


def replace_all(
    files: list[tuple[Path, bytes]], *, fsync: bool = True, folder: Folder | None = None
) -> None:
    """Replace several files as one: every new content is written to its temporary file
    first, and only then renamed into place, so a write that fails (a full disk) leaves
    all of them as they were. With `folder`, every target is a file of that folder."""
    temps: list[_Temp] = []
    opened: list[Folder] = []
    try:
        for target, data in files:
            where = folder
            if where is None:
                where = _open_folder(target.parent)
                opened.append(where)
            tmp = _Temp(where, target, None, 0o644)
            temps.append(tmp)
            _write_all(tmp.fd, data, fsync, target)
            tmp.close()
        for tmp, (target, _) in zip(temps, files, strict=True):
            try:
                tmp.rename_to(target.name)
            except OSError as exc:
                raise _named(exc, target) from None
    finally:
        for tmp in temps:
            tmp.discard()
        for where in opened:
            where.close()


def make_folders(folder: Path) -> list[Path]:
    """Make `folder` and its missing parents; the ones made, deepest first."""
    missing = []
    probe = folder
    while not probe.exists() and probe.parent != probe:
        missing.append(probe)
        probe = probe.parent
    folder.mkdir(parents=True, exist_ok=True)
    return missing


def remove_empty(folders: list[Path]) -> None:
    """Remove these folders, deepest first, where they are still empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _open_folder(path: Path, *, make: bool = False, named: Path | None = None) -> Folder:
    """The folder at `path`, opened as named (see the module's note); with `make`, made
    first if missing (a temporary folder)."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        try:
            return Folder(os.open(path, flags), path)
        except FileNotFoundError:
            if not make:
                raise
            path.mkdir(parents=True, exist_ok=True)
            return Folder(os.open(path, flags), path)
    except OSError as exc:
        if exc.filename is None:
            exc.filename = str(named or path)
        raise


def _open_new(folder: Folder, name: str, mode: int) -> int:
    """A new file `name` in `folder`, never through a link."""
    try:
        return os.open(name, _NEW, mode, dir_fd=folder.fd)
    except OSError as exc:
        # The temporary name means nothing to a person: name the folder it was to go in.
        raise _named(exc, folder.path) from None


def _stat_key(where: Folder, name: str) -> tuple[int, int] | None:
    try:
        st = os.stat(name, dir_fd=where.fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns


def _named(exc: OSError, path: Path) -> OSError:
    """`exc` naming `path` (an error relative to a descriptor names only a bare name)."""
    return type(exc)(exc.errno, exc.strerror, str(path))


def fsync_dir(path: Path) -> None:
    """Make the renames into `path` durable (best effort: not every system can)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_fd(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError:
        pass
