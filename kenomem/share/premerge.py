"""Merging in one process what git would hand the driver file by file.

git runs a merge driver as a new process for each file both sides changed: at a
thousand touched memories that is a thousand Python starts (about a minute). So for its
own `git merge --no-commit`, when the two sides have one merge base, `sync` gives git a
driver that merges nothing (`LEAVE`, a shell's `exit 1`): git leaves each memory file
and buffer day both sides changed unmerged, its three versions in the index (stages 1,
2 and 3: the base, ours, theirs) and ours in the work tree, never a conflict marker.
`merge_unmerged` then reads them all in one `git cat-file --batch`, merges each by
`merge.py` (the driver's rules, review copies included) and stages the result.

Until then git itself refuses to commit the merge (its paths are unmerged), so a sync
killed between the two steps leaves nothing that a commit could take as merged: the
next sync merges those files from the same stages (`resume.py`). With several merge
bases, the stages would hold git's own merge of the bases, so the real driver runs
instead, file by file.
"""

from __future__ import annotations

from pathlib import Path

from kenomem.errors import KenomemError
from kenomem.files.atomic import write_bytes
from kenomem.files.paths import check_writable
from kenomem.share.driver import merge_texts
from kenomem.share.git import blobs, git, pathspecs
from kenomem.share.incoming import is_own

LEAVE = "exit 1"  # the driver line that leaves a file unmerged for `merge_unmerged`
FILE_MODES = ("100644", "100755")


def stages(listed: str) -> dict[str, dict[str, tuple[str, str]]]:
    """For each unmerged path of `git ls-files -u -z`: stage -> (mode, object). Pure."""
    found: dict[str, dict[str, tuple[str, str]]] = {}
    for record in listed.split("\0"):
        if "\t" in record:
            info, path = record.split("\t", 1)
            mode, obj, stage = info.split()
            found.setdefault(path, {})[stage] = (mode, obj)
    return found


def merged_by_driver(path: str) -> bool:
    """Whether the file is one kenomem's driver merges: a memory file or a buffer day."""
    return is_own(path) and path.endswith(".md") and "/" in path


def merge_unmerged(root: Path) -> list[str]:
    """Merge by kenomem's rules, in this process, each memory file and buffer day git
    left unmerged with both sides present (`LEAVE`, or a driver that was stopped or
    could not start), from the index's stages; write it and stage it. The paths merged.
    A file that cannot be merged (not text, a folder that leads out of the vault) stays
    unmerged, for the user."""
    unmerged = stages(git(root, "ls-files", "-u", "-z", check=False).out)
    todo = [
        (path, [found[s][1] if s in found else "" for s in ("1", "2", "3")])
        for path, found in sorted(unmerged.items())
        if merged_by_driver(path)
        and {"2", "3"} <= set(found)
        and all(mode in FILE_MODES for mode, _ in found.values())
    ]
    wanted = sorted({obj for _, objects in todo for obj in objects if obj})
    contents = dict(zip(wanted, blobs(root, wanted), strict=True))
    done = []
    for path, objects in todo:
        try:
            base, ours, theirs = ((contents.get(o) or b"").decode("utf-8") for o in objects)
            result = merge_texts(root, path, base, ours, theirs)
            check_writable(root, path)
            write_bytes(root / path, result.text.encode("utf-8"), fsync=False)
        except (UnicodeDecodeError, ValueError, OSError, KenomemError):
            continue  # left as git left it: ours, unmerged
        done.append(path)
    if done:
        spec = pathspecs(done)
        git(root, "add", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=spec)
    return done
