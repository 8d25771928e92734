"""The change scan: every memory file's size and mtime, found with `os` alone.

This module imports nothing but `os`, `sys` and `marshal` on purpose: `scanjob` runs it
in a fresh interpreter (`python -I -S`) beside the command, and that interpreter must
start in milliseconds.
"""

from __future__ import annotations

import marshal
import os
import sys

MEMORY_TYPES = ("semantic", "episodic", "procedural", "working")
# Folders whose markdown files are memories.
MEMORY_DIRS = (*MEMORY_TYPES, "archive")

Stat = tuple[int, int]  # size, mtime_ns

# File times are only as fine as the file system keeps them (2 s on FAT, 1 s on HFS+, a
# few ms on ext4). A file recorded within that window of its last change could change
# again without its stat changing, so its record is marked unverified: the next sync
# reads it again and compares its content (as git does with "racily clean" entries).
RACY_NS = 2_000_000_000


class ScanResult:
    # A plain class: `typing` alone would triple the scanner's start-up.
    __slots__ = ("files", "problems")

    def __init__(self, files: dict[str, Stat], problems: dict[str, str]) -> None:
        self.files = files
        self.problems = problems  # path -> why it was passed over


def scan(root: str | os.PathLike[str]) -> ScanResult:
    """Every `*.md` under the memory folders, with its size and mtime.

    Hidden names (editors' temporary files, `.kenomem/`) are passed over; symlinks are
    followed only when they stay inside the vault.
    """
    files: dict[str, Stat] = {}
    problems: dict[str, str] = {}
    root_str = os.fspath(root)
    prefix = len(root_str) + 1
    stack = [os.path.join(root_str, name) for name in MEMORY_DIRS]
    while stack:
        directory = stack.pop()
        try:
            entries = os.scandir(directory)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            problems[directory[prefix:]] = f"cannot list folder: {exc.strerror}"
            continue
        base = directory[prefix:].replace(os.sep, "/") + "/" if len(directory) > prefix else ""
        with entries:
            for entry in entries:
                name = entry.name
                if name[0] == ".":
                    continue
                try:
                    if entry.is_symlink() and not _stays_inside(entry.path, root_str):
                        problems[base + name] = "symlink to outside the vault, not followed"
                        continue
                    if name.endswith(".md"):
                        if not entry.is_file():  # a pipe or a device would hang a read
                            if not entry.is_dir():
                                problems[base + name] = "not a regular file"
                            continue
                        st = entry.stat()
                        files[base + name] = (st.st_size, st.st_mtime_ns)
                    elif entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                except OSError:
                    continue  # vanished while we looked: it is simply not there
    return ScanResult(files, problems)


def _stays_inside(path: str, root: str) -> bool:
    real_root = os.path.realpath(root)
    return os.path.realpath(path).startswith(real_root + os.sep)


def child_main() -> None:
    """`scan ROOT STATS_FILE GENERATION`: scan, compare with the saved stats, and write to
    stdout, marshalled, the difference: `(changed {path: stat}, gone [path], problems)`,
    or `(None, None, problems)` when the saved stats could not be read."""
    root, stats_file, generation = sys.argv[1], sys.argv[2], int(sys.argv[3])
    seen = scan(root)
    changed: dict[str, Stat] | None = None
    gone: list[str] | None = None
    try:
        with open(stats_file, "rb") as handle:
            # One read, then loads: `marshal.load` on the file reads it in small pieces,
            # several times slower.
            saved_generation, saved = marshal.loads(handle.read())
        if saved_generation == generation:
            files = seen.files
            changed = {path: stat for path, stat in files.items() if saved.get(path) != stat}
            gone = [path for path in saved if path not in files]
    except (OSError, EOFError, ValueError, TypeError):
        pass
    answer = (changed, gone, seen.problems)
    with os.fdopen(sys.stdout.fileno(), "wb", closefd=False) as out:
        out.write(marshal.dumps(answer))
