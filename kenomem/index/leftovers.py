"""What killed runs leave under `.kenomem/`: found (for `doctor`) and removed (by `reindex`,
any rebuild, and `doctor --fix`).

- a rebuild's new index folder, `index/<engine>.new-<pid>`, and the old one it was
  swapping out, `index/<engine>.old-<pid>` (`index.built_beside`);
- the temporary files of atomic writes, `.<name>.<pid>.<random>.tmp` (`atomic.temp_name`),
  in `.kenomem/tmp/` or beside a derived file, and the heartbeat's `.watcher.<pid>.tmp`.

Each name carries the pid of the process that made it, and a leftover is one whose
process is not running: a live process's file is never touched (a pid is checked again
just before its file is removed). A file in `.kenomem/tmp/` without a pid in its name is
a leftover once untouched for `UNNAMED_AFTER_SECONDS`. Only these names are looked at,
and never inside `.kenomem/trash/` (the files a `reset` moved there are the vault's).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import NamedTuple

from kenomem.errors import UnsafePath
from kenomem.files import beneath
from kenomem.files.paths import STATE_DIR
from kenomem.index import heartbeat

INDEX_DIR = "index"
TEMP_DIR = "tmp"
TRASH_DIR = "trash"
UNNAMED_AFTER_SECONDS = 600.0

_INDEX_NAME = re.compile(r".+\.(?:new|old)-(\d+)")
# `.<name>.<pid>.<6 hex digits>.tmp`: the pid is the second field from the right (the
# random part may be all digits, the name may hold dots and digits).
_TEMP_NAME = re.compile(r"\..+\.(\d+)\.[0-9a-f]{6}\.tmp")
_BEAT_NAME = re.compile(r"\." + re.escape(heartbeat.NAME) + r"\.(\d+)\.tmp")


class Leftover(NamedTuple):
    path: str  # vault-relative
    pid: int  # the process that made it; 0 when its name has none
    folder: bool

    def describe(self) -> str:
        what = "a rebuild's index folder" if self.folder else "a temporary file"
        if not self.pid:
            return f"{what} nobody has touched for {UNNAMED_AFTER_SECONDS / 60:.0f} minutes"
        return f"{what} left by process {self.pid}, which is not running"


def find(root: Path, now: float | None = None) -> list[Leftover]:
    """The leftovers of dead processes under `root/.kenomem`, sorted by path."""
    state = root / STATE_DIR
    now = time.time() if now is None else now
    found: list[Leftover] = []
    for folder, dirs, names in os.walk(state):
        here = Path(folder)
        rel = here.relative_to(state).as_posix()
        if rel == ".":
            dirs[:] = [d for d in dirs if d != TRASH_DIR]
        if rel == INDEX_DIR:
            found += _index_folders(root, here, dirs)
            dirs[:] = []  # an engine's own files are its business
        for name in names:
            item = _temp_file(root, here / name, in_temp_dir=rel == TEMP_DIR, now=now)
            if item is not None:
                found.append(item)
    return sorted(found)


def _index_folders(root: Path, index: Path, dirs: list[str]) -> list[Leftover]:
    found = []
    for name in dirs:
        m = _INDEX_NAME.fullmatch(name)
        if m and not _running(int(m.group(1))):
            found.append(Leftover(_rel(root, index / name), int(m.group(1)), True))
    return found


def _temp_file(root: Path, path: Path, *, in_temp_dir: bool, now: float) -> Leftover | None:
    m = _TEMP_NAME.fullmatch(path.name) or _BEAT_NAME.fullmatch(path.name)
    if m and int(m.group(1)) > 0:
        pid = int(m.group(1))
        return None if _running(pid) else Leftover(_rel(root, path), pid, False)
    if not in_temp_dir:
        return None  # not a name kenomem gives its temporary files
    try:
        untouched = now - path.lstat().st_mtime
    except FileNotFoundError:
        return None
    return Leftover(_rel(root, path), 0, False) if untouched > UNNAMED_AFTER_SECONDS else None


def dead_temporary(name: str) -> bool:
    """Whether `name` is the temporary file of an atomic write whose process is not
    running (for the folders outside `.kenomem/` that kenomem writes its own files in:
    a reset's folder in the trash)."""
    m = _TEMP_NAME.fullmatch(name)
    return m is not None and int(m.group(1)) > 0 and not _running(int(m.group(1)))


def _running(pid: int) -> bool:
    return pid > 0 and heartbeat.alive(pid)


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def remove(root: Path, leftovers: list[Leftover]) -> list[str]:
    """Remove these leftovers (those whose process is still not running); what was removed."""
    removed = []
    for item in leftovers:
        if item.pid and _running(item.pid):
            continue
        # From its folder in `.kenomem/` held by descriptor: a link is removed as the link.
        where, name = beneath.split(item.path.removeprefix(f"{STATE_DIR}/"))
        try:
            with beneath.private(root / STATE_DIR, where, create=False) as folder:
                beneath.remove_in(folder, name)
        except (OSError, UnsafePath):
            continue  # gone already, or left for the next time: never the command's error
        removed.append(item.path)
    return removed


def clean(root: Path) -> list[str]:
    """Find and remove the leftovers under `root/.kenomem`; what was removed."""
    return remove(root, find(root))
