"""What code the command server runs: the files its modules were loaded from, as the
server found them once its imports were done.

A server imports its code once, when the watcher starts; the files may change after that
(an upgrade, a reinstall, an edit in a development checkout), and a call served then would
run other code than the caller's own process would load. So each call first checks the
files again (`changed`), and a server whose code changed serves no more (`server.py`).

Which files: every module of kenomem the server loaded, every file besides modules that
the command line says it reads as code (the argument table), and, for each other package
from outside the standard library (the engines, rich), the file of its top-level module,
which an upgrade replaces like every other (a new inode). One `os.stat` each, about a
microsecond: ~70 files cost a served call ~0.1 ms.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

import kenomem

Entry = tuple[str, int, int, int]  # path, inode, size, mtime in nanoseconds


def loaded(files: Iterable[str] = ()) -> list[str]:
    """The files that make up the code loaded in this process now (see the module's
    docstring), and `files`, as absolute paths, sorted."""
    package = os.path.dirname(os.path.abspath(kenomem.__file__)) + os.sep
    found = {os.path.abspath(f) for f in files}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str):
            continue  # built into the interpreter, or a namespace package
        path = os.path.abspath(path)
        top_level = "." not in name
        if path.startswith(package) or (top_level and name not in sys.stdlib_module_names):
            found.add(path)
    return sorted(found)


def take(paths: Iterable[str]) -> tuple[Entry, ...]:
    """The fingerprint of `paths` now; a file that cannot be read counts as changed."""
    return tuple((path, *_stat(path)) for path in paths)


def changed(fingerprint: tuple[Entry, ...]) -> str | None:
    """The first file whose inode, size or modification time differs from `fingerprint`
    (or that is gone), None when none does."""
    for path, inode, size, mtime in fingerprint:
        if _stat(path) != (inode, size, mtime):
            return path
    return None


def _stat(path: str) -> tuple[int, int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1, -1)
    return (st.st_ino, st.st_size, st.st_mtime_ns)
