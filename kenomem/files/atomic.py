"""Writes that are all-or-nothing: a temporary file, then a rename over the target.

The temporary file goes in `temp_dir` when the caller gives one on the same file system
(the vault's `.kenomem/tmp/`): creating a file in a folder of thousands costs far more
than in a small one, and watchers and editors of the memory folders never see it. When
a rename across folders is refused, the temporary file is made next to the target.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

from kenomem.errors import KenomemError


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
    temp_dir: Path | None = None,
    before_replace: Callable[[os.stat_result], None] | None = None,
) -> os.stat_result:
    """Atomically replace `target` with `data` and return the new file's stat.

    With `fsync`, the data is on disk before the rename, so a crash leaves the old file or
    the new one, never an empty one; `sync_dir` also makes the rename itself durable
    (worth it for new content, not for an access count).

    `expect_stat` is the (size, mtime_ns) the caller read; if the file no longer has it
    when we are about to replace it, someone edited it meanwhile and we raise `DirtyFile`
    rather than lose their change.

    `before_replace` learns the new file's stat just before it takes the target's place
    (so that a record of the write can precede the write's file system event).
    """
    tmp = temp_name(target, temp_dir)
    made: list[Path] = []
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
        made = make_folders(target.parent)
    try:
        fd = _open_new(tmp, mode)
    except BaseException:
        remove_empty(made)
        raise
    try:
        try:
            _write_all(fd, data, fsync, target)
            written = os.fstat(fd)
        finally:
            os.close(fd)
        if expect_stat is not None and _stat_key(target) != expect_stat:
            raise DirtyFile(f"{target} changed while kenomem was updating it; left as it is")
        if before_replace is not None:
            before_replace(written)
        try:
            os.replace(tmp, target)
        except OSError as exc:
            if exc.errno != errno.EXDEV or temp_dir is None:
                raise
            os.unlink(tmp)  # another file system: write beside the target instead
            return write_bytes(
                target,
                data,
                fsync=fsync,
                sync_dir=sync_dir,
                expect_stat=expect_stat,
                before_replace=before_replace,
            )
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        remove_empty(made)
        raise
    if fsync and sync_dir:
        fsync_dir(target.parent)
    return written


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
    temp_dir: Path | None = None,
    sync_dir: bool = True,
) -> os.stat_result:
    """Atomically create `target`; raise FileExistsError if it already exists.

    Without `sync_dir` the data is still on disk before the link, and the caller makes
    the folder durable itself (`fsync_dir`), once for many files. A failed create leaves
    nothing: no temporary file, and no folder it made for the target."""
    made = make_folders(target.parent)
    try:
        return _create(target, data, fsync, temp_dir, sync_dir)
    except BaseException:
        remove_empty(made)
        raise


def _create(
    target: Path, data: bytes, fsync: bool, temp_dir: Path | None, sync_dir: bool
) -> os.stat_result:
    tmp = temp_name(target, temp_dir)
    fd = _open_new(tmp, 0o644)
    try:
        try:
            _write_all(fd, data, fsync, target)
        finally:
            os.close(fd)
        try:
            # link() fails if the target exists, which rename() would silently overwrite.
            os.link(tmp, target)
        except FileExistsError:
            raise
        except OSError as exc:
            if exc.errno == errno.EXDEV and temp_dir is not None:
                os.unlink(tmp)  # another file system: write beside the target instead
                return _create(target, data, fsync, None, sync_dir)
            # No hard links on this file system: callers hold the vault lock, so a
            # check then a rename is exclusive among kenomem processes.
            if target.exists():
                raise FileExistsError(str(target)) from None
            os.replace(tmp, target)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    if fsync and sync_dir:
        fsync_dir(target.parent)
    return target.stat()


def append_bytes(target: Path, data: bytes, *, fsync: bool = True, create: bool = False) -> None:
    """Append `data` to the file `target` (FileNotFoundError if there is none, unless
    `create`): all of it, or nothing. A write cut short (a full disk) is cut back off, so
    the file ends where it did and a later append does not run on from a torn one.
    Callers hold the vault lock: appends of other kenomem processes wait for it."""
    flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)  # never through a link
    fd = os.open(target, flags | (os.O_CREAT if create else 0), 0o644)
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


def replace_all(files: list[tuple[Path, bytes]], *, fsync: bool = True) -> None:
    """Replace several files as one: every new content is written to its temporary file
    first, and only then renamed into place, so a write that fails (a full disk) leaves
    all of them as they were."""
    done: list[Path] = []
    try:
        for target, data in files:
            tmp = temp_name(target)
            fd = _open_new(tmp, 0o644)
            done.append(tmp)
            try:
                _write_all(fd, data, fsync, target)
            finally:
                os.close(fd)
        for tmp, (target, _) in zip(done, files, strict=True):
            os.replace(tmp, target)
    finally:
        for tmp in done:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass


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


def _open_new(path: Path, mode: int) -> int:
    try:
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except FileNotFoundError:  # the temporary folder is not there yet
            path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except OSError as exc:
        # The temporary name means nothing to a person: name the folder it was to go in.
        if exc.filename == str(path):
            exc.filename = str(path.parent)
        raise


def _stat_key(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns


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
