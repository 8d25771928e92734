"""Merging in one process what git would hand the driver file by file.

git runs a merge driver as a new process for each file both sides changed: at a
thousand touched memories that is a thousand Python starts (about a minute). Before its
`git merge --no-commit`, `sync` reads the three versions of each such file in one `git
cat-file --batch`, merges them here (`merge.py`, the same rules) and keeps the results
under `.git/kenomem-merge/`. For that merge only, the driver git runs is a shell test:
for a file merged ahead it leaves ours in place, for any other (one renamed on a side,
one kenomem did not foresee) it runs the real driver. Then `apply` puts the results in
the work tree and stages them, and `sync` commits the merge.

Only a file at the same path in the merge base and on both sides, with one merge base,
is merged ahead: git then merges exactly those three versions (rename detection pairs
only files added or deleted on a side), so the result is the one the driver would have
given. A merge that yields a review copy is left to the real driver, which writes the
copy only when git merges the file.
"""

from __future__ import annotations

import shlex
import shutil
from datetime import UTC, datetime
from pathlib import Path

from kenomem.files.atomic import write_bytes
from kenomem.files.paths import check_writable
from kenomem.share.git import git, git_bytes
from kenomem.share.merge import merge

FOLDER = "kenomem-merge"


def blobs(root: Path, names: list[str]) -> list[bytes | None]:
    """The contents of `names` ("REV:path"), in order; None for one that is missing."""
    if not names:
        return []
    out = git_bytes(root, "cat-file", "--batch", stdin=b"".join(n.encode() + b"\n" for n in names))
    at = 0
    found: list[bytes | None] = []
    for _ in names:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) != 3 or header[1] != b"blob":
            found.append(None)
            continue
        size = int(header[2])
        found.append(out[at : at + size])
        at += size + 1
    return found


def prepare(root: Path, git_dir: Path, ref: str, paths: list[str]) -> int:
    """Merge ahead the `paths` both HEAD and `ref` changed since their one merge base;
    how many were merged (0 when there is no single base)."""
    bases = git(root, "merge-base", "--all", "HEAD", ref, check=False).out.split()
    folder = git_dir / FOLDER
    shutil.rmtree(folder, ignore_errors=True)
    if len(bases) != 1 or not paths:
        return 0
    names = [f"{rev}:{p}" for p in paths for rev in (bases[0], "HEAD", ref)]
    contents = blobs(root, names)
    now = datetime.now(UTC).replace(microsecond=0)
    merged = 0
    for i, path in enumerate(paths):
        base, ours, theirs = contents[3 * i : 3 * i + 3]
        if base is None or ours is None or theirs is None:
            continue
        try:
            result = merge(
                path,
                base.decode("utf-8") or None,
                ours.decode("utf-8"),
                theirs.decode("utf-8"),
                now=now,
                new_id=str,  # a merge that makes a review copy is left to the driver
            )
        except (UnicodeDecodeError, ValueError):
            continue
        if result.copies:
            continue
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(result.text.encode("utf-8"))
        merged += 1
    return merged


def driver_command(git_dir: Path, fallback: str) -> str:
    """The shell line git runs for each file: nothing for a file merged ahead (`apply`
    writes it), else `fallback`, the real driver."""
    return f"test -f {shlex.quote(str(git_dir / FOLDER))}/%P || {fallback}"


def apply(root: Path, git_dir: Path) -> list[str]:
    """Put the results merged ahead in the work tree and stage them; their paths."""
    folder = git_dir / FOLDER
    done = []
    for result in sorted(folder.rglob("*")) if folder.is_dir() else []:
        if not result.is_file():
            continue
        path = result.relative_to(folder).as_posix()
        check_writable(root, path)
        write_bytes(root / path, result.read_bytes(), fsync=False)
        done.append(path)
    if done:
        spec = "\0".join(done) + "\0"
        git(root, "add", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=spec)
    return done


def clean(git_dir: Path) -> None:
    shutil.rmtree(git_dir / FOLDER, ignore_errors=True)
