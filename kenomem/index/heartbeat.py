"""The watcher's heartbeat: `.kenomem/watcher`, which tells other commands they may skip
their own change scan.

One line, `pid beat pending`: the watcher's process id, when it last wrote (epoch
seconds), and how many changed paths it holds that are not indexed yet. A command
trusts the index only while the beat is recent, the process is alive and nothing is
pending; otherwise it scans, so a watcher that died or fell behind hides nothing.

Its files are opened in `.kenomem/` held by descriptor and never through a link
(`beneath`): the temporary file of a beat is made new (`O_CREAT | O_EXCL | O_NOFOLLOW`)
and renamed in the same folder, and a heartbeat that is a symlink is not read.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from kenomem.errors import UnsafePath
from kenomem.files import beneath

NAME = "watcher"
INTERVAL_SECONDS = 1.0  # how often a running watcher beats
FRESH_SECONDS = 3.0  # a beat older than this is not trusted


class Beat:
    # A plain class: every command reads the heartbeat, and a NamedTuple costs ~1 ms to define.
    __slots__ = ("pending", "pid", "time")

    def __init__(self, pid: int, time: float, pending: int) -> None:
        self.pid = pid
        self.time = time
        self.pending = pending


_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | beneath.NOFOLLOW


def write(state_dir: Path, pending: int) -> None:
    """Beat. Never creates the vault's folders: a vault that vanished gets no heartbeat."""
    line = f"{os.getpid()} {time.time():.3f} {pending}\n".encode()
    tmp = f".{NAME}.{os.getpid()}.tmp"
    try:
        folder = beneath.private(state_dir, create=False)
    except (OSError, UnsafePath):
        return  # the vault went away, or its .kenomem is not one to trust: no beat
    with folder:
        try:
            try:
                fd = os.open(tmp, _NEW, 0o644, dir_fd=folder.fd)
            except FileExistsError:  # left by a process of the same pid: never reused as is
                os.unlink(tmp, dir_fd=folder.fd)
                fd = os.open(tmp, _NEW, 0o644, dir_fd=folder.fd)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
            os.replace(tmp, NAME, src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
        except FileNotFoundError:
            pass  # the vault went away
        except OSError:
            # A beat that cannot be renewed (a full or read-only disk) must not be trusted
            # either: without one, commands scan for themselves.
            for name in (tmp, NAME):
                try:
                    os.unlink(name, dir_fd=folder.fd)
                except OSError:
                    pass


def read(state_dir: Path) -> Beat | None:
    try:
        fd = beneath.open_private(state_dir, NAME, os.O_RDONLY, create=False)
    except (OSError, UnsafePath):
        return None  # none, or a link: not trusted
    try:
        pid, beat, pending = os.read(fd, 256).decode().split()
        return Beat(int(pid), float(beat), int(pending))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def clear(state_dir: Path) -> None:
    try:
        with beneath.private(state_dir, create=False) as folder:
            os.unlink(NAME, dir_fd=folder.fd)
    except (FileNotFoundError, UnsafePath):
        pass


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process, but alive
    return True


def trusted(state_dir: Path, now: float | None = None) -> bool:
    """Whether a live, up-to-date watcher vouches for the index right now."""
    beat = read(state_dir)
    if beat is None or beat.pending:
        return False
    now = time.time() if now is None else now
    # A beat slightly in the future is the rounding of its time, not a clock gone wrong.
    return -1.0 <= now - beat.time <= FRESH_SECONDS and alive(beat.pid)
