"""A merge that `sync` began and did not finish: found, and finished by kenomem's rules.

A sync can be killed at any moment (`kill -9`, a machine that goes down), and any git
step can pass its timeout (git is then stopped). So before its `git merge`, `sync`
writes `.git/KENOMEM_MERGE` (HEAD and the commit it merges), and removes it once the
merge is committed or handed to the user. A sync that finds it there settles that
merge first (`settle`):

- git's merge ran to its end (`MERGE_HEAD` is the commit named, HEAD unchanged): it is
  finished as `sync` finishes any merge (`conclude`): the memory files and buffer days
  git left unmerged are merged from their three stages by `merge.py`
  (`premerge.merge_unmerged`); a file one side deleted and the other changed stays,
  changed; the merge is committed. What still conflicts (a file of the human's own) is
  handed over as after any merge: markers in that file only, the user told what to do;
- git was stopped before its end (no `MERGE_HEAD`, HEAD unchanged): what it had written
  is put back as it was committed (a file whose content is neither the incoming one nor
  the one git staged, so changed since, is left as it is, and said), the temporary
  files git left (`.merge_file_*`) and review copies written since the merge began are
  removed, and the sync merges again from the start;
- the merge was committed (HEAD is the merge of the two, or the fetched commit itself
  after a fast-forward): nothing is left to do;
- HEAD moved otherwise (by hand): the record is dropped.

So a merge is never committed with "ours" for files kenomem merges (git refuses to
commit unmerged paths, and sync merges them before it commits), and the user is never
asked to commit a merge kenomem left half-done. A git that outlived a killed `sync`
(it runs in a session of its own) is waited for while it holds `.git/index.lock`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import NamedTuple

from kenomem.errors import FrontmatterError, SyncError, UnsafePath
from kenomem.files import fm
from kenomem.files.atomic import write_bytes
from kenomem.files.paths import check_writable, read_inside
from kenomem.share import premerge
from kenomem.share.git import LITERAL, blobs, git, git_paths, pathspecs
from kenomem.share.incoming import is_own, shown
from kenomem.share.merge import MERGE_OF

RECORD = "KENOMEM_MERGE"
LOCK_WAIT = 30.0  # seconds a git that outlived a killed sync may hold the index lock
TEMP_PREFIX = ".merge_file_"  # git's temporary files for a merge driver, at the top


class Begun(NamedTuple):
    """A merge `sync` began: HEAD before it ("" on a branch with no commit yet), the
    commit it merges, and when it began (the record's time)."""

    ours: str
    theirs: str
    at: float


class Settled(NamedTuple):
    pulled: list[str]  # files a finished merge changed here
    notes: list[str]
    merged: list[str]  # of those, the ones it merged by kenomem's rules (both sides changed)


def begin(git_dir: Path, ours: str, theirs: str) -> None:
    write_bytes(git_dir / RECORD, f"{ours or '-'} {theirs}\n".encode())


def end(git_dir: Path) -> None:
    (git_dir / RECORD).unlink(missing_ok=True)


def begun(git_dir: Path) -> Begun | None:
    path = git_dir / RECORD
    try:
        words = path.read_text(encoding="utf-8").split()
        at = path.stat().st_mtime
    except (OSError, UnicodeDecodeError):
        return None
    if len(words) != 2:
        return None
    return Begun("" if words[0] == "-" else words[0], words[1], at)


def settle(root: Path, git_dir: Path, identity: list[str], name: str) -> Settled:
    """Finish or undo the merge of `name` a sync began and did not finish (see the
    module's docstring); nothing when there is none."""
    record = begun(git_dir)
    if record is None:
        return Settled([], [], [])
    _wait_for_git(git_dir)
    head = _head(root)
    merge_head = _merge_head(git_dir)
    if merge_head:
        if (merge_head, head) != (record.theirs, record.ours):
            end(git_dir)  # a merge of someone else's: left to them
            return Settled([], [], [])
        merged = conclude(root, git_dir, identity, name)
        note = f"finished the merge of {name} an earlier sync had left unfinished"
        return Settled(_changed(root, record.ours), [note], merged)
    if head == record.ours:
        left = undo(root, record)
        end(git_dir)
        notes = [f"{shown(f)}: changed since a stopped merge wrote it, left as it is" for f in left]
        return Settled([], notes, [])
    parents = git(root, "rev-parse", "HEAD^@", check=False)
    end(git_dir)
    if head == record.theirs or parents.out.split() == [record.ours, record.theirs]:
        return Settled(_changed(root, record.ours), [], [])
    return Settled([], [], [])


def conclude(root: Path, git_dir: Path, identity: list[str], name: str) -> list[str]:
    """Finish the merge git left in progress (`MERGE_HEAD`): the files kenomem merges
    that are still unmerged merged from their stages, a file deleted on one side and
    changed on the other kept, changed; then committed. A conflict left in a file of
    the human's own is handed over (`SyncError`, the merge left as it is). The files
    merged here by kenomem's rules."""
    merged = premerge.merge_unmerged(root)
    keep_changed_over_deleted(root)
    unmerged = sorted(git_paths(root, "diff", "--name-only", "--diff-filter=U", check=False))
    if unmerged:
        end(git_dir)
        raise SyncError(
            f"the merge of {name} still conflicts in: {', '.join(map(shown, unmerged))} "
            "(files kenomem's driver does not merge, changed on both sides)",
            hint="edit them, git add them and git commit, then kenomem sync again; or undo "
            "the merge with git merge --abort",
        )
    git(root, "commit", "--no-edit", "--no-verify", "-q", config=identity)
    end(git_dir)
    return merged


def kept_sides(listed: str) -> dict[str, str]:
    """For each conflicting path of `git ls-files -u -z` that one side deleted and the
    other changed: the side that changed it ("ours" or "theirs"). Pure."""
    return {
        path: "ours" if "2" in found else "theirs"
        for path, found in premerge.stages(listed).items()
        if len(set(found) & {"2", "3"}) == 1
    }


def keep_changed_over_deleted(root: Path) -> list[str]:
    """Settle each conflict of a vault file one side deleted and the other changed: the
    changed file stays (never a lost edit). The paths settled."""
    keep = kept_sides(git(root, "ls-files", "-u", "-z", check=False).out)
    keep = {path: side for path, side in keep.items() if is_own(path)}
    for path, side in keep.items():
        if side == "theirs":
            git(root, "checkout", "--theirs", "--", f"{LITERAL}{path}")
    _add(root, sorted(keep))
    return sorted(keep)


def undo(root: Path, record: Begun) -> list[str]:
    """Put back what a merge stopped before its end had written (see the module's
    docstring); the files left as they are, changed since."""
    paths = _merge_paths(root, record)
    dirty = sorted(set(paths) & set(_dirty(root)))
    in_head, theirs = _tree(root, "HEAD"), _tree(root, record.theirs)
    names = [tree.get(p, "") for p in dirty for tree in (in_head, theirs)]
    found = blobs(root, [n for n in names if n])
    contents = dict(zip([n for n in names if n], found, strict=True))
    staged = _staged(root, dirty)
    restore, remove, left = [], [], []
    for path in dirty:
        try:
            now = _content(root, path)
        except UnsafePath:  # a link out of the vault on its way: not git's doing
            left.append(path)
            continue
        # What git writes: theirs, what it staged, or ours as committed (a file it left
        # unmerged keeps it, with its stages in the index).
        sides = (in_head.get(path, ""), theirs.get(path, ""))
        written = {*(contents.get(obj) for obj in sides), staged.get(path)} - {None}
        if now is not None and now not in written:
            left.append(path)
        elif path in in_head:
            restore.append(path)
        else:
            remove.append(path)
    if restore:
        spec = pathspecs(restore)
        git(root, "checkout", "HEAD", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=spec)
    if remove:
        spec = pathspecs(remove)
        git(root, "rm", "-q", "--cached", "--ignore-unmatch", "-f", "--pathspec-from-file=-",
            "--pathspec-file-nul", stdin=spec)  # fmt: skip
        for path in remove:
            _remove(root, path)
    if left:  # the work tree keeps what was written since; the index goes back to HEAD
        git(root, "reset", "-q", "--pathspec-from-file=-", "--pathspec-file-nul",
            stdin=pathspecs(left))  # fmt: skip
    _remove_leftovers(root, record)
    return left


def _merge_paths(root: Path, record: Begun) -> list[str]:
    """The paths a merge of `record.theirs` into `record.ours` may have written."""
    if not record.ours:
        return git_paths(root, "ls-tree", "-r", "--name-only", "--full-tree", record.theirs)
    return git_paths(root, "diff", "--name-only", "--no-renames", record.ours, record.theirs)


def _tree(root: Path, rev: str) -> dict[str, str]:
    """Each file of the commit `rev`: path -> object id."""
    listed = git(root, "ls-tree", "-r", "-z", "--full-tree", rev, check=False).out
    found = {}
    for record in listed.split("\0"):
        if "\t" in record:
            info, path = record.split("\t", 1)
            found[path] = info.split()[2]
    return found


def _dirty(root: Path) -> list[str]:
    """The paths whose index entry or work-tree file differs from HEAD, or untracked."""
    listed = git(
        root, "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all"
    ).out
    return [entry[3:] for entry in listed.split("\0") if len(entry) > 3]


def _staged(root: Path, paths: list[str]) -> dict[str, bytes | None]:
    """The content the index holds for each of `paths` (stage 0)."""
    if not paths:
        return {}
    wanted = set(paths)
    objects = {}
    for record in git(root, "ls-files", "-s", "-z").out.split("\0"):
        if "\t" in record:
            info, path = record.split("\t", 1)
            _, obj, stage = info.split()
            if stage == "0" and path in wanted:
                objects[path] = obj
    contents = blobs(root, list(objects.values()))
    return dict(zip(objects, contents, strict=True))


def _content(root: Path, path: str) -> bytes | None:
    try:
        if os.path.islink(root / path):
            return os.readlink(root / path).encode()
        return read_inside(root, path)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def _remove(root: Path, path: str) -> None:
    check_writable(root, path)
    try:
        (root / path).unlink()
    except FileNotFoundError:
        pass


def _remove_leftovers(root: Path, record: Begun) -> None:
    """git's temporary files and the review copies of a merge stopped before its end:
    made since it began (the copies are made again when the merge is)."""
    since = record.at - 1
    with os.scandir(root) as entries:
        for entry in entries:
            temp = entry.name.startswith(TEMP_PREFIX) and entry.is_file(follow_symlinks=False)
            if temp and entry.stat(follow_symlinks=False).st_mtime >= since:
                os.unlink(entry.path)
    for path in git_paths(root, "ls-files", "--others", "--exclude-standard"):
        if not premerge.merged_by_driver(path):
            continue
        try:
            if os.lstat(root / path).st_mtime < since:
                continue
        except OSError:
            continue
        if is_review_copy(root, path):
            _remove(root, path)


def is_review_copy(root: Path, path: str) -> bool:
    """Whether the vault file `path` is a review copy a merge wrote (its frontmatter
    names the memory it came from, `merge_of`). A file on a way out of the vault is
    `UnsafePath`."""
    try:
        text = read_inside(root, path).decode("utf-8")
        parts = fm.split(text, path)
        meta = fm.parse(parts.fm_text, path=path) if parts.has_frontmatter else {}
    except (OSError, UnicodeDecodeError, FrontmatterError):
        return False
    return bool(meta.get(MERGE_OF))


def _add(root: Path, paths: list[str]) -> None:
    if paths:
        spec = pathspecs(paths)
        git(root, "add", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=spec)


def _head(root: Path) -> str:
    return git(root, "rev-parse", "-q", "--verify", "HEAD", check=False).out.strip()


def _merge_head(git_dir: Path) -> str:
    try:
        return (git_dir / "MERGE_HEAD").read_text(encoding="utf-8").split()[0]
    except (FileNotFoundError, IndexError):
        return ""


def _changed(root: Path, before: str) -> list[str]:
    if not before:
        return []
    return git_paths(root, "diff", "--name-only", before, "HEAD", check=False)


def _wait_for_git(git_dir: Path) -> None:
    """Wait while `.git/index.lock` is held: a git that outlived a killed sync may
    still be finishing the merge."""
    lock = git_dir / "index.lock"
    deadline = time.monotonic() + LOCK_WAIT
    while lock.exists():
        if time.monotonic() > deadline:
            raise SyncError(
                "git's index lock (.git/index.lock) is still held: another git runs in the "
                "vault's repository, or one was killed while it worked",
                hint="wait for it to end; if no git is running, remove .git/index.lock, "
                "then kenomem sync again: it finishes the merge it began",
            )
        time.sleep(0.1)
