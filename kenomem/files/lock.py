"""One lock per vault, for every process that writes to it.

An OS-level lock (flock) is released by the kernel when its holder dies, so a crashed
writer never leaves the vault locked. The lock file holds the holder's pid for `doctor`,
when it can: on a full disk the pid is left out, and where `.kenomem/` is read-only the
lock file is locked through a read-only descriptor. Either way the lock is taken, so a
reading command still answers, and a write then fails on its own write with the cause.

The lock file is opened in `.kenomem/` held by descriptor (`beneath.open_private`: a real
folder of the user's own) and never through a link: a symlink at `.kenomem/lock` (which
kenomem never makes) is refused with what to do, rather than truncated through. It is
not replaced in passing: two processes replacing it at once could each lock a file of
its own, and the lock would no longer keep writers apart.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from types import TracebackType

from kenomem.errors import LockTimeout, UnsafePath, cannot_write
from kenomem.files import beneath

LOCK_NAME = "lock"


class VaultLock:
    def __init__(self, state_dir: Path, timeout: float = 30.0) -> None:
        self.path = state_dir / LOCK_NAME
        self.timeout = timeout
        self._fd: int | None = None
        self._writable = False
        self._depth = 0

    def acquire(self) -> None:
        if self._depth:
            self._depth += 1
            return
        fd, writable = _open(self.path)
        deadline = time.monotonic() + self.timeout
        delay = 0.005
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                os.close(fd)
                raise LockTimeout(
                    f"the vault is busy: another kenomem process held {self.path} "
                    f"for more than {self.timeout:g}s"
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
        if writable:
            try:
                os.ftruncate(fd, 0)
                os.write(fd, str(os.getpid()).encode())
            except OSError:
                pass  # only `doctor` reads it: a full disk must not stop a command here
        self._fd, self._writable = fd, writable
        self._depth = 1

    @property
    def fd(self) -> int | None:
        """The open lock file while held (a forked worker closes its copy)."""
        return self._fd

    def release(self) -> None:
        if not self._depth:
            return
        self._depth -= 1
        if self._depth or self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if self._writable:
                os.ftruncate(fd, 0)  # a pid left in the file means its holder died holding it
        except OSError:
            pass
        finally:
            try:
                _unlock(fd)
            finally:
                os.close(fd)

    def __enter__(self) -> VaultLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _open(path: Path, *, create: bool = True) -> tuple[int, bool]:
    """The lock file, opened to write the pid into; read-only where it cannot be written
    (flock works on either). (descriptor, writable). Its folder is made if missing (never
    the vault itself, should it have vanished), but only with `create`."""
    state_dir, name = path.parent, path.name
    flags = os.O_RDWR | (os.O_CREAT if create else 0)
    try:
        fd, writable = beneath.open_private(state_dir, name, flags, 0o644, create=create), True
    except OSError as exc:
        if not cannot_write(exc):
            raise
        try:
            fd = beneath.open_private(state_dir, name, os.O_RDONLY, create=False)
            writable = False
        except FileNotFoundError:
            raise exc from None  # no lock file, and none can be made: say why
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafePath(
                f"{path} is not a regular file; kenomem locks the vault with a file there",
                hint=f"remove it (rm -r {path}): kenomem makes it again",
            )
    except BaseException:
        os.close(fd)
        raise
    return fd, writable


def held_elsewhere(state_dir: Path) -> bool:
    """Whether another process holds the vault lock now (the lock file is not changed)."""
    try:
        fd, _ = _open(state_dir / LOCK_NAME, create=False)
    except FileNotFoundError:
        return False
    try:
        if not _try_lock(fd):
            return True
        _unlock(fd)
        return False
    finally:
        os.close(fd)


try:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

except ImportError:  # Windows
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
