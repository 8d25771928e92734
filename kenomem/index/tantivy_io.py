"""How the tantivy engine meets the disk.

- tantivy reports a failure as text (mostly a ValueError). One that carries the error of
  a disk refusing (full, read-only, not allowed) is raised as that OSError, for the
  command to name; the others mean a damaged index (IndexCorrupt), which is rebuilt.
- tantivy takes a lock file even to read an index, which a read-only folder refuses.
  The index is then read from a copy in a temporary folder, removed as soon as the
  index is open (the open index keeps its files mapped); writing to it fails as a write
  to the folder would.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import tantivy

from kenomem.errors import IndexCorrupt, KenomemError, cannot_write, is_storage_error

_OS_ERROR = re.compile(r"(?:\bcode: |os error )(\d+)")


@contextmanager
def corruption_guard(where: Path | None = None) -> Iterator[None]:
    """Turn the ways a damaged index fails into IndexCorrupt; a busy lock stays itself,
    and a disk that refuses becomes its OSError (naming `where`, the index's folder)."""
    try:
        yield
    except (KenomemError, KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except (ValueError, OSError, KeyError, IndexError, TypeError, EOFError) as exc:
        if isinstance(exc, OSError) and is_storage_error(exc):
            raise
        refused = os_error(exc, where)
        if refused is not None:
            raise refused from exc
        raise IndexCorrupt(f"the index cannot be read ({type(exc).__name__}: {exc})") from exc
    except BaseException as exc:
        if type(exc).__name__ != "PanicException":  # pyo3_runtime.PanicException
            raise
        raise IndexCorrupt(f"the index cannot be read (tantivy panicked: {exc})") from exc


def os_error(exc: BaseException, where: Path | None = None) -> OSError | None:
    """The file system's error that a tantivy failure reports in its text, when it is
    one kenomem names (a full disk, a read-only folder...); None otherwise."""
    found = _OS_ERROR.search(str(exc))
    if found is None:
        return None
    code = int(found.group(1))
    error = OSError(code, os.strerror(code), None if where is None else str(where))
    return error if is_storage_error(error) else None


def open_index(directory: Path, prepare: Callable[[Any], None]) -> tuple[Any, OSError | None]:
    """The index in `directory`, opened and `prepare`d (tokenizers, reader), and None;
    or, where the folder cannot be written, the index read from a copy, and the error
    that a write to the folder meets."""
    try:
        with corruption_guard(directory):
            ix = tantivy.Index.open(str(directory))
            prepare(ix)
        return ix, None
    except OSError as exc:
        if not cannot_write(exc):
            raise
        refused = exc
    import shutil
    import tempfile

    copy = tempfile.mkdtemp(prefix="kenomem-index-")
    try:
        shutil.copytree(directory, copy, dirs_exist_ok=True)
        with corruption_guard(directory):
            ix = tantivy.Index.open(copy)
            prepare(ix)
            ix.searcher()  # maps the files now, before they go
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    return ix, refused
