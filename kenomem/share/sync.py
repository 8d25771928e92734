"""`kenomem sync`: commit the vault's own changes, pull, merge and push, through git.

The vault is the top of a git work tree with a remote. A sync:

1. refuses a repository it cannot sync from, naming the cause and the fix: no git, no
   repository, a vault inside a larger work tree, a detached HEAD, a rebase or a merge
   in progress, no remote, a tracked `.kenomem/`;
2. makes sure the merge driver is set up (`setup.py`);
3. commits the vault's own changes, and only them: memory files, buffer days,
   `foundation.md`, `kenomem.toml`, the vault's `README.md`, `.gitattributes`,
   `.gitignore` (and the `.gitkeep` that keep its folders); never `.kenomem/`,
   never another file of the work tree (those are listed as left alone);
4. fetches, and merges the remote branch: memory files and buffer days through the
   driver, so no conflict marker in them (those both sides changed are merged ahead in
   this process, `premerge.py`, so that git need not start the driver for each). A file
   one side deleted and the other changed is kept, changed (never a lost edit). A merge
   that still conflicts (a file of the human's own both sides changed) stops with the
   files named, left as git left them;
5. commits the review copies the driver wrote, and pushes (`-u` on the first push of
   the branch, which sets its upstream); never `--force`. A push refused because the
   remote moved meanwhile is fetched and merged again, a few times.

The commit author is the user's git identity; with none configured, `kenomem
<kenomem@HOST>` (said in the result), so that an agent on a fresh machine can sync.

The index is not touched: the next kenomem command's change scan sees the files the pull
changed (their size and time changed) and indexes them.

`--dry-run` reports the plan, from `git status` and the refs already fetched; it changes
nothing, fetches nothing.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import NamedTuple

from kenomem.errors import SyncError
from kenomem.files.lock import VaultLock
from kenomem.files.paths import (
    BUFFER_DIR,
    FOUNDATION,
    MARKER,
    MEMORY_DIRS,
    STATE_DIR,
    require_marker,
    state_dir,
)
from kenomem.share import premerge, setup
from kenomem.share.git import NETWORK_TIMEOUT, Done, git, git_paths, last_line

PUSH_TRIES = 3
OWN_FILES = (FOUNDATION, MARKER, "README.md", setup.ATTRIBUTES, setup.IGNORE)


class SyncRequest(NamedTuple):
    dry_run: bool = False  # say what would be done; change and fetch nothing
    setup: bool = False  # only set the merge driver up (idempotent)


class SyncPlan(NamedTuple):
    branch: str
    remote: str
    upstream: str  # "remote/branch" once set, "" before the first push
    commit: list[str]  # the vault's own changed files, to commit
    left: list[str]  # changed files of the work tree that are not the vault's
    setup: list[str]  # what the driver's setup would change


class SyncResult(NamedTuple):
    vault: str
    dry_run: bool
    branch: str
    remote: str
    committed: list[str]  # files committed from this machine
    pulled: list[str]  # files the merge brought or changed
    review: list[str]  # review copies the merge driver wrote (theirs, kept as new memories)
    pushed: bool
    upstream_set: bool  # the first push set the branch's upstream
    setup: list[str]  # what the driver's setup changed
    left: list[str]  # changed files of the work tree sync leaves alone
    notes: list[str]


def is_own(path: str) -> bool:
    """Whether a work-tree path is one `sync` commits: the vault's own files."""
    if path.startswith(f"{STATE_DIR}/") or path == STATE_DIR:
        return False
    top = path.split("/", 1)[0]
    if top in MEMORY_DIRS or top == BUFFER_DIR:
        return path.endswith((".md", "/.gitkeep"))
    return path in OWN_FILES


def changed_paths(status: str) -> list[str]:
    """The paths `git status --porcelain=v1 -z` names (a rename: both)."""
    fields = status.split("\0")
    paths: list[str] = []
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if len(entry) < 4:
            continue
        paths.append(entry[3:])
        if entry[0] in "RC":  # the original path follows
            paths.append(fields[i])
            i += 1
    return paths


def make_plan(
    status: str, branch: str, remote: str, upstream: str, setup_changes: list[str]
) -> SyncPlan:
    paths = changed_paths(status)
    left = sorted({p for p in paths if not is_own(p) and not p.startswith(f"{STATE_DIR}/")})
    return SyncPlan(branch, remote, upstream, own_changes(status), left, setup_changes)


def own_changes(status: str) -> list[str]:
    """The vault's own files `git status --porcelain=v1 -z` names: what `sync` commits."""
    return sorted({p for p in changed_paths(status) if is_own(p)})


def sync(root: Path, request: SyncRequest) -> SyncResult:
    require_marker(root, "sync")
    git_dir = _check_repository(root)
    branch = _branch(root)
    if request.setup:
        changes = setup.planned(root) if request.dry_run else setup.install(root)
        return SyncResult(str(root), request.dry_run, branch, "", [], [], [], False, False,
                          changes, [], [])  # fmt: skip
    remote, upstream = _remote(root, branch)
    _check_untracked_state(root)
    status = git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all").out
    plan = make_plan(status, branch, remote, upstream, setup.planned(root))
    if request.dry_run:
        return _planned(root, plan)
    notes: list[str] = []
    # Other kenomem commands wait while the files change (commit, merge), not while git
    # talks to the remote.
    lock = VaultLock(state_dir(root), timeout=60.0)
    with lock:
        changes = setup.install(root) if plan.setup else []
        identity = _identity(root, notes)
        committed = _commit(root, identity, f"kenomem sync from {_host()}")
    pulled: list[str] = []
    review: list[str] = []
    pushed = upstream_set = False
    for _ in range(PUSH_TRIES):
        ref = _fetch(root, remote, branch)
        with lock:
            brought, copies = (
                _merge(root, git_dir, remote, branch, ref, identity) if ref else ([], [])
            )
            if copies:
                _commit(root, identity, "kenomem sync: the other side's edits, kept for review")
        pulled += [p for p in brought if p not in pulled]
        review += copies
        first = not upstream
        push = ["push", *(["-u"] if first else []), remote, f"HEAD:refs/heads/{branch}"]
        done = git(root, *push, timeout=NETWORK_TIMEOUT, check=False)
        if done.code == 0:
            pushed, upstream_set = True, first
            break
        if not refused_as_behind(done.err):
            raise _unreachable(remote, done, "push")
    else:
        raise SyncError(
            f"the push to {remote} was refused {PUSH_TRIES} times: the remote kept moving",
            hint="run kenomem sync again; your commits are kept locally",
        )
    return SyncResult(str(root), False, branch, remote, committed, pulled, review, pushed,
                      upstream_set, changes, plan.left, notes)  # fmt: skip


def _planned(root: Path, plan: SyncPlan) -> SyncResult:
    notes = [] if plan.commit else ["nothing to commit"]
    incoming: list[str] = []
    if plan.upstream:
        incoming = git_paths(root, "diff", "--name-only", "HEAD...@{u}", check=False)
        notes.append(
            f"would pull and merge {len(incoming)} files from {plan.upstream} (as last fetched)"
        )
        notes.append(f"would push to {plan.upstream}")
    else:
        notes.append(f"would fetch from {plan.remote}, merge {plan.branch} if it is there")
        notes.append(f"would push and set the upstream to {plan.remote}/{plan.branch}")
    return SyncResult(str(root), True, plan.branch, plan.remote, plan.commit, incoming, [],
                      False, False, plan.setup, plan.left, notes)  # fmt: skip


def _check_repository(root: Path) -> Path:
    """The repository's git folder, once the vault is found to be a repository of its own
    in a state to sync."""
    done = git(root, "rev-parse", "--show-toplevel", "--absolute-git-dir", check=False)
    if done.code != 0:
        raise SyncError(
            f"the vault {root} is not a git repository",
            hint="make it one: kenomem init --git (or git init), add a remote (git remote "
            "add origin URL), then kenomem sync",
        )
    top, git_dir = (Path(line) for line in done.out.splitlines()[:2])
    if os.path.realpath(top) != os.path.realpath(root):
        raise SyncError(
            f"the vault {root} is inside the git work tree {top}, not at its top",
            hint="kenomem sync shares a vault that is a repository of its own: git init in "
            "the vault, or move the vault out",
        )
    if (git_dir / "rebase-merge").exists() or (git_dir / "rebase-apply").exists():
        raise SyncError(
            "a rebase is in progress in the vault's repository",
            hint="finish it (git rebase --continue) or undo it (git rebase --abort), then "
            "kenomem sync",
        )
    if (git_dir / "MERGE_HEAD").exists():
        unmerged = _unmerged(root)
        raise SyncError(
            "a merge is in progress in the vault's repository"
            + (f"; still conflicting: {', '.join(unmerged)}" if unmerged else ""),
            hint="resolve the files, git add them and git commit, then kenomem sync; or undo "
            "the merge with git merge --abort",
        )
    return git_dir


def _check_untracked_state(root: Path) -> None:
    """Refuse a repository that tracks `.kenomem/`: each machine's index would be
    committed, and every pull would fight over it."""
    if git(root, "ls-files", "-z", "--", STATE_DIR).out:
        raise SyncError(
            f"the vault's repository tracks {STATE_DIR}/, the derived index each machine "
            "builds for itself",
            hint=f"stop tracking it (its files stay): git rm -r -q --cached {STATE_DIR} && "
            f"git commit -m 'stop tracking {STATE_DIR}/', then kenomem sync",
        )


def _branch(root: Path) -> str:
    done = git(root, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    if done.code != 0:
        raise SyncError(
            "the vault's repository has a detached HEAD: there is no branch to sync",
            hint="check a branch out (git switch main, or git switch -c NAME), then kenomem sync",
        )
    return done.out.strip()


def _remote(root: Path, branch: str) -> tuple[str, str]:
    """(remote, upstream "remote/branch" or "" before the first push)."""
    upstream = git(root, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}", check=False)
    remote = git(root, "config", "--get", f"branch.{branch}.remote", check=False).out.strip()
    if upstream.code == 0 and remote:
        return remote, upstream.out.strip()
    remotes = git(root, "remote").out.split()
    if not remotes:
        raise SyncError(
            "the vault's repository has no git remote to sync with",
            hint="add one: git remote add origin URL (a bare repository, GitHub, a server "
            "over ssh), then kenomem sync",
        )
    if "origin" in remotes or len(remotes) == 1:
        return ("origin" if "origin" in remotes else remotes[0]), ""
    raise SyncError(
        f"the vault's repository has several remotes ({', '.join(remotes)}) and the branch "
        f"{branch} has no upstream",
        hint=f"choose one: git push -u REMOTE {branch}, then kenomem sync",
    )


def _identity(root: Path, notes: list[str]) -> list[str]:
    """`-c` settings for commits: none when the user has a git identity."""
    name = git(root, "config", "user.name", check=False).out.strip()
    email = git(root, "config", "user.email", check=False).out.strip()
    env = os.environ
    if (name or env.get("GIT_AUTHOR_NAME")) and (email or env.get("GIT_AUTHOR_EMAIL")):
        return []
    host = _host()
    notes.append(
        f"no git identity is configured: committed as kenomem <kenomem@{host}> "
        "(set yours with git config user.name / user.email)"
    )
    return [f"user.name={name or 'kenomem'}", f"user.email={email or f'kenomem@{host}'}"]


def _host() -> str:
    return socket.gethostname().split(".")[0] or "localhost"


def _commit(root: Path, identity: list[str], message: str) -> list[str]:
    """Commit the vault's own changed files (and nothing else staged); which ones."""
    own = own_changes(git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all").out)
    if not own:
        return []
    spec = "\0".join(own) + "\0"
    git(root, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=spec)
    if not set(git_paths(root, "diff", "--cached", "--name-only")) & set(own):
        return []
    git(
        root,
        "commit",
        "--no-verify",
        "-q",
        "-m",
        message,
        "--pathspec-from-file=-",
        "--pathspec-file-nul",
        config=identity,
        stdin=spec,
    )
    return own


def _fetch(root: Path, remote: str, branch: str) -> str:
    """Fetch the remote; its branch's ref, or "" when it has none yet (the push makes
    it)."""
    done = git(root, "fetch", "-q", remote, timeout=NETWORK_TIMEOUT, check=False)
    if done.code != 0:
        raise _unreachable(remote, done, "fetch")
    ref = f"refs/remotes/{remote}/{branch}"
    return ref if git(root, "rev-parse", "-q", "--verify", ref, check=False).code == 0 else ""


def _merge(
    root: Path, git_dir: Path, remote: str, branch: str, ref: str, identity: list[str]
) -> tuple[list[str], list[str]]:
    """Merge the fetched branch; (files it changed here, review copies written)."""
    before = git(root, "rev-parse", "HEAD", check=False).out.strip()
    untracked_before = set(_untracked(root))
    driver = setup.driver_command()
    if premerge.prepare(root, git_dir, ref, _changed_on_both(root, ref)):
        driver = premerge.driver_command(git_dir, driver)
    try:
        merged = git(
            root,
            "merge",
            "--no-edit",
            "--no-commit",
            "-q",
            "-m",
            f"kenomem sync: merge {remote}/{branch}",
            ref,
            config=[*identity, f"merge.{setup.DRIVER}.driver={driver}"],
            check=False,
        )
        premerge.apply(root, git_dir)
    finally:
        premerge.clean(git_dir)
    if merged.code == 0 and (git_dir / "MERGE_HEAD").exists():
        git(root, "commit", "--no-edit", "--no-verify", "-q", config=identity)
    copies = sorted(set(_untracked(root)) - untracked_before)
    if merged.code != 0 and _keep_changed_over_deleted(root, identity):
        merged = merged._replace(code=0)
    if merged.code != 0:
        unmerged = _unmerged(root)
        if not unmerged:
            raise SyncError(
                f"git merge {remote}/{branch} failed: {last_line(merged.err or merged.out)}",
                hint="run git status in the vault; nothing was pushed",
            )
        raise SyncError(
            f"the merge of {remote}/{branch} still conflicts in: {', '.join(unmerged)} "
            "(files kenomem's driver does not merge, changed on both sides)",
            hint="edit them, git add them and git commit, then kenomem sync again; or undo "
            "the merge with git merge --abort",
        )
    if not before:
        return [], copies
    return git_paths(root, "diff", "--name-only", before, "HEAD"), copies


def kept_sides(unmerged: str) -> dict[str, str]:
    """For each conflicting path of `git ls-files -u -z` that one side deleted and the
    other changed: the side that changed it ("ours" or "theirs"). Pure."""
    stages: dict[str, set[str]] = {}
    for record in unmerged.split("\0"):
        if "\t" in record:
            info, path = record.split("\t", 1)
            stages.setdefault(path, set()).add(info.split()[-1])
    return {
        path: "ours" if "2" in found else "theirs"
        for path, found in stages.items()
        if len(found & {"2", "3"}) == 1
    }


def _keep_changed_over_deleted(root: Path, identity: list[str]) -> bool:
    """Settle a merge whose only conflicts are vault files one side deleted and the
    other changed: the changed file stays (never a lost edit). Whether the merge is
    committed; False leaves it as git left it."""
    listed = git(root, "ls-files", "-u", "-z", check=False).out
    unmerged = {r.split("\t", 1)[1] for r in listed.split("\0") if "\t" in r}
    keep = kept_sides(listed)
    if not unmerged or set(keep) != unmerged or not all(is_own(p) for p in keep):
        return False
    for path, side in keep.items():
        if side == "theirs":
            git(root, "checkout", "--theirs", "--", path)
        git(root, "add", "--", path)
    git(root, "commit", "--no-edit", "--no-verify", "-q", config=identity)
    return True


def _changed_on_both(root: Path, ref: str) -> list[str]:
    """The vault's memory files and buffer days both HEAD and `ref` changed since their
    merge base (renames not followed: those go to the driver itself)."""
    changed = []
    for range_ in (f"{ref}...HEAD", f"HEAD...{ref}"):
        changed.append(
            set(git_paths(root, "diff", "--name-only", "--no-renames", range_, check=False))
        )
    both = changed[0] & changed[1]
    return sorted(p for p in both if is_own(p) and p.endswith(".md") and "/" in p)


def _untracked(root: Path) -> list[str]:
    return git_paths(root, "ls-files", "--others", "--exclude-standard")


def _unmerged(root: Path) -> list[str]:
    return sorted(git_paths(root, "diff", "--name-only", "--diff-filter=U", check=False))


def refused_as_behind(stderr: str) -> bool:
    """Whether git refused a push because the remote branch moved on: before the push
    (`[rejected] ... (fetch first)`, `non-fast-forward`) or while it ran (the remote's
    `cannot lock ref ...: is at X but expected Y`). Pure."""
    text = stderr.lower()
    before = "rejected" in text and ("fetch first" in text or "non-fast-forward" in text)
    during = "cannot lock ref" in text and "but expected" in text
    return before or during


def _unreachable(remote: str, done: Done, what: str) -> SyncError:
    return SyncError(
        f"git {what} to {remote} failed: {last_line(done.err or done.out)}",
        hint=f"check the remote's address (git remote -v), the network and your access to "
        f"it, then kenomem sync again; the vault is as it was before the {what}",
    )
