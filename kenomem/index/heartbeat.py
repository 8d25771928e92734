"""The watcher's heartbeat: `.kenomem/watcher`, which tells other commands they may skip
their own change scan.

One line, `pid beat pending`: the watcher's process id, when it last wrote (epoch
seconds), and how many changed paths it holds that are not indexed yet. A command
trusts the index only while the beat is recent, the process is alive and nothing is
pending; otherwise it scans, so a watcher that died or fell behind hides nothing.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

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


def write(state_dir: Path, pending: int) -> None:
    """Beat. Never creates the vault's folders: a vault that vanished gets no heartbeat."""
    line = f"{os.getpid()} {time.time():.3f} {pending}\n".encode()
    tmp = state_dir / f".{NAME}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
        os.replace(tmp, state_dir / NAME)
    except FileNotFoundError:
        pass  # the vault went away
    except OSError:
        # A beat that cannot be renewed (a full or read-only disk) must not be trusted
        # either: without one, commands scan for themselves.
        for path in (tmp, state_dir / NAME):
            try:
                os.unlink(path)
            except OSError:
                pass


def read(state_dir: Path) -> Beat | None:
    try:
        pid, beat, pending = (state_dir / NAME).read_text().split()
        return Beat(int(pid), float(beat), int(pending))
    except (OSError, ValueError):
        return None


def clear(state_dir: Path) -> None:
    try:
        os.unlink(state_dir / NAME)
    except FileNotFoundError:
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
