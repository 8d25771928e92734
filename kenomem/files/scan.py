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

# Why a path is passed over: it, or a folder on its way, is a symlink that leaves the vault.
OUTSIDE = "symlink to outside the vault, not followed"
_S_IFMT, _S_IFLNK = 0o170000, 0o120000  # `stat`'s constants, without importing it


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
    stack = []
    for name in MEMORY_DIRS:
        if outside(root_str, name):  # `semantic/` itself a symlink to another folder
            problems[name] = OUTSIDE
        else:
            stack.append(os.path.join(root_str, name))
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
                    if entry.is_symlink() and outside(root_str, base + name):
                        problems[base + name] = OUTSIDE
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


def outside(root: str | os.PathLike[str], rel: str, follow_last: bool = True) -> bool:
    """Whether the vault-relative path `rel` leads out of the vault at `root`: it is
    absolute or climbs with `..`, or a symlink on its way resolves outside `root` (a
    folder's, or the file's own unless `follow_last` is false: to remove or rename a
    symlink is not to follow it). What does not exist leads nowhere: the walk stops.

    The one containment check of kenomem (`paths` names it for the rest): a `lstat` for
    each part of `rel`, and only where one is a symlink, the real paths compared.
    """
    parts = rel.split("/")
    if "" in parts or ".." in parts:
        return True
    root_str = os.fspath(root)
    path = root_str
    last = len(parts) - 1
    for n, part in enumerate(parts):
        path += os.sep + part
        try:
            mode = os.lstat(path).st_mode
        except OSError:  # not there, or not a folder: nothing to follow
            return False
        if mode & _S_IFMT == _S_IFLNK:
            if n == last and not follow_last:
                return False
            target = os.path.join(root_str, *parts)
            if not follow_last:
                target = os.path.dirname(target)
            try:
                return not _within(os.path.realpath(target), os.path.realpath(root_str))
            except OSError:  # a link on the way changed while it was read: not followed
                return True
    return False


def _within(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def digest_of(data: bytes) -> str:
    """A file's content digest, as the state records it (a change of bytes, not of stat)."""
    import hashlib  # not at import: the bare scanner never hashes

    return hashlib.blake2b(data, digest_size=16).hexdigest()


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
