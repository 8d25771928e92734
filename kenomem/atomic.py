"""Writes that are all-or-nothing: a temporary file in the same folder, then a rename."""

from __future__ import annotations

import os
from pathlib import Path

from kenomem.errors import KenomemError


class DirtyFile(KenomemError):
    """The file changed on disk between our read and our write; our write was dropped."""


def temp_name(target: Path) -> Path:
    # Hidden, so vault scans and editors' file lists pass over it.
    return target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(3).hex()}.tmp")


def write_bytes(
    target: Path,
    data: bytes,
    *,
    fsync: bool = True,
    sync_dir: bool = True,
    expect_stat: tuple[int, int] | None = None,
) -> os.stat_result:
    """Atomically replace `target` with `data` and return the new file's stat.

    With `fsync`, the data is on disk before the rename, so a crash leaves the old file or
    the new one, never an empty one; `sync_dir` also makes the rename itself durable
    (worth it for new content, not for an access count).

    `expect_stat` is the (size, mtime_ns) the caller read; if the file no longer has it
    when we are about to replace it, someone edited it meanwhile and we raise `DirtyFile`
    rather than lose their change.
    """
    tmp = temp_name(target)
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
        target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
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
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if fsync and sync_dir:
        _fsync_dir(target.parent)
    return written


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def create_bytes(target: Path, data: bytes, *, fsync: bool = True) -> os.stat_result:
    """Atomically create `target`; raise FileExistsError if it already exists."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
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
        except OSError:
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
    if fsync:
        _fsync_dir(target.parent)
    return target.stat()


def _stat_key(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns


def _fsync_dir(path: Path) -> None:
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
