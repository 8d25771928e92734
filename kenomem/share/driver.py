"""The merge driver git runs for a vault's memory files and buffer days.

Installed by `kenomem sync --setup` (`setup.py`) as `merge.kenomem.driver`, git calls it
as `kenomem merge-driver %O %A %B %P`, from the top of the work tree: %O holds the
common ancestor, %A ours (where the result goes), %B theirs, %P the file's path. The merge
is decided by `merge.py`; here the result is written to %A and each review copy beside
the file, under a name no file has; a copy already there (the same text but for its id
and time, written by a merge that was stopped and is done again) is not written twice.
The command (`cli/merge_driver.py`) exits 0 (merged
cleanly, never with markers), or 1 when it could not run at all (git then reports a
conflict and leaves ours as it was).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from kenomem.errors import KenomemError
from kenomem.files.atomic import create_bytes, write_bytes
from kenomem.files.paths import check_writable, read_text_inside
from kenomem.share.merge import Merged, merge


def run_driver(base: Path, ours: Path, theirs: Path, path: str, top: Path) -> Merged:
    """Merge the three files into `ours` and write the review copies under `top`."""
    result = merge_texts(
        top,
        path.replace(os.sep, "/"),
        base.read_text(encoding="utf-8"),
        ours.read_text(encoding="utf-8"),
        theirs.read_text(encoding="utf-8"),
    )
    write_bytes(ours, result.text.encode("utf-8"), fsync=False)  # git reads it back
    return result


def merge_texts(top: Path, path: str, base: str, ours: str, theirs: str) -> Merged:
    """The merge of a file's three versions (an empty `base`: none, both sides added
    it); its review copies written under `top`, the merged text returned."""
    now = datetime.now(UTC).replace(microsecond=0)
    result = merge(
        path,
        base or None,  # git gives an empty ancestor when both sides added the file
        ours,
        theirs,
        now=now,
        new_id=lambda: _new_id(now),
    )
    for copy in result.copies:
        _write_copy(top, copy.folder, copy.stem, copy.text)
    return result


def _new_id(now: datetime) -> str:
    from kenomem.files.memory import new_id  # only for a review copy: rare

    return new_id(now)


def _write_copy(top: Path, folder: str, stem: str, text: str) -> Path:
    data = text.encode("utf-8")
    for n in range(1, 1000):
        name = f"{stem}.md" if n == 1 else f"{stem}-{n}.md"
        rel = f"{folder}/{name}" if folder else name
        check_writable(top, rel)  # never through a folder that is a link out of the vault
        target = top / rel
        try:
            create_bytes(target, data)
        except FileExistsError:
            if _same_copy(top, rel, text):
                return target
            continue
        return target
    raise FileExistsError(f"no free name for {stem!r} in {folder}")


def _same_copy(top: Path, rel: str, text: str) -> bool:
    """Whether the file `rel` is the review copy `text`, but for the id and the time it
    was given when it was written."""
    try:
        found = read_text_inside(top, rel)
    except (OSError, UnicodeDecodeError, KenomemError):
        return False
    return _unstamped(found) == _unstamped(text)


def _unstamped(text: str) -> list[str]:
    return [line for line in text.split("\n") if not line.startswith(_STAMPS)]


_STAMPS = ("id:", "created:")  # what a review copy is given anew each time it is written
