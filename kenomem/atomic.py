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
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
        target.parent.mkdir(parents=True, exist_ok=True)
    fd = _open_new(tmp, mode)
    try:
        try:
            _write_all(fd, data)
            if fsync:
                os.fsync(fd)
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
        raise
    if fsync and sync_dir:
        fsync_dir(target.parent)
    return written


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


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
    the folder durable itself (`fsync_dir`), once for many files."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(target, temp_dir)
    fd = _open_new(tmp, 0o644)
    try:
        try:
            _write_all(fd, data)
            if fsync:
                os.fsync(fd)
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
                return create_bytes(target, data, fsync=fsync, sync_dir=sync_dir)
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


def _open_new(path: Path, mode: int) -> int:
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileNotFoundError:  # the temporary folder is not there yet
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)


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
