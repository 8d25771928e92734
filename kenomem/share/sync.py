"""`kenomem sync`: commit the vault's own changes, pull, merge and push, through git.

The vault is the top of a git work tree with a remote. A sync:

1. refuses a repository it cannot sync from, naming the cause and the fix: no git, no
   repository, a vault inside a larger work tree, a detached HEAD, a rebase or a merge
   of someone else's in progress, no remote, a tracked `.kenomem/`;
2. finishes, by kenomem's rules, a merge an earlier sync began and did not finish
   (killed, or stopped past its timeout: `resume.py`);
3. makes sure the merge driver is set up (`setup.py`);
4. commits the vault's own changes, and only them: memory files, buffer days,
   `foundation.md`, `kenomem.toml`, the vault's `README.md`, `.gitattributes`,
   `.gitignore` (and the `.gitkeep` that keep its folders); never `.kenomem/`,
   never another file of the work tree (those are listed as left alone);
5. fetches, and checks what the remote branch would bring (`incoming.py`): anything but
   the vault's own files (`.kenomem/`, a hidden name, a symlink, a submodule, another
   file, changed git rules) stops the sync before git touches the work tree, naming the
   path and the commit;
6. merges the remote branch: memory files and buffer days by kenomem's rules, so no
   conflict marker in them (those both sides changed are left unmerged by git and
   merged in this process, `premerge.py`, so that git need not start the driver for
   each). A file one side deleted and the other changed is kept, changed (never a lost
   edit). A merge that still conflicts (a file of the human's own both sides changed)
   stops with the files named, left as git left it;
7. commits the review copies the driver wrote, and pushes (`-u` on the first push of
   the branch, which sets its upstream); never `--force`. A push refused because the
   remote moved meanwhile is fetched and merged again, a few times.

The commit author is the user's git identity; with none configured, `kenomem
<kenomem@HOST>` (said in the result), so that an agent on a fresh machine can sync.

The result says what happened on this side: the files committed, pulled, merged by
kenomem's rules (both sides changed them), kept for review (a review copy written here,
or brought by the pull from another machine's merge: the version that machine set
aside, often this one's own), and how many commits the push sent (none: the remote had
them all).

The index is kept by the caller: `refresh` (the opened vault's change scan, from the
Python API) runs once the merge has changed files, so that the index is in step with
them when sync returns; without it, the next kenomem command's change scan sees the
files the pull changed (their size and time changed) and indexes them.

`--dry-run` reports the plan, from `git status` and the refs already fetched; it changes
nothing, fetches nothing.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from kenomem.errors import KenomemError, SyncError, UnsafePath
from kenomem.files.lock import VaultLock
from kenomem.files.paths import STATE_DIR, require_marker, state_dir
from kenomem.files.plural import counted
from kenomem.share import incoming, premerge, resume, setup
from kenomem.share.git import NETWORK_TIMEOUT, Done, git, git_paths, last_line, pathspecs
from kenomem.share.incoming import is_own

PUSH_TRIES = 3
# What shows the review copies waiting for a person, in the result for the human and
# the agent alike.
REVIEW_COMMAND = "kenomem list --tag merge-review"


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
    pulled: list[str]  # files the merge brought or changed here
    review: list[str]  # review copies the merge wrote here (theirs, kept as new memories)
    pushed: bool  # the push sent commits (False: none to send, or a dry run)
    upstream_set: bool  # the first push set the branch's upstream
    setup: list[str]  # what the driver's setup changed
    left: list[str]  # changed files of the work tree sync leaves alone
    notes: list[str]
    merged: list[str]  # files both sides changed, merged here by kenomem's rules
    # Review copies the pull brought: another machine's merge kept its own version in
    # place and this one's (or a third machine's) beside it, for a person to look at.
    review_pulled: list[str]
    review_command: str  # what lists the copies waiting for review, when there are
    pushed_commits: int  # commits the push sent to the remote branch


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


def sync(
    root: Path, request: SyncRequest, refresh: Callable[[], object] | None = None
) -> SyncResult:
    """Sync the vault at `root` (see the module's docstring). `refresh` brings the index
    in step with the files, once the merge has changed some."""
    require_marker(root, "sync")
    git_dir = _check_repository(root)
    branch = _branch(root)
    if request.setup:
        changes = setup.planned(root) if request.dry_run else setup.install(root)
        return SyncResult(str(root), request.dry_run, branch, "", [], [], [], False, False,
                          changes, [], [], [], [], "", 0)  # fmt: skip
    remote, upstream = _remote(root, branch)
    _check_untracked_state(root)
    name = f"{remote}/{branch}"
    if request.dry_run:
        unfinished = _check_merge(root, git_dir)
        status = git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all").out
        plan = make_plan(status, branch, remote, upstream, setup.planned(root))
        return _planned(root, plan, unfinished)
    notes: list[str] = []
    # Other kenomem commands wait while the files change (commit, merge), not while git
    # talks to the remote.
    lock = VaultLock(state_dir(root), timeout=60.0)
    with lock:
        identity = _identity(root, notes)
        unsettled = resume.begun(git_dir) is not None
        settled = resume.settle(root, git_dir, identity, name)
        notes += settled.notes
        # The review copies of a merge finished now (written by it, or by the sync that
        # began it), committed below with the rest.
        review = _review_copies(root, _untracked(root)) if unsettled else []
        _check_merge(root, git_dir)
        status = git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all").out
        plan = make_plan(status, branch, remote, upstream, setup.planned(root))
        changes = setup.install(root) if plan.setup else []
        committed = _commit(root, identity, f"kenomem sync from {_host()}")
    pulled: list[str] = list(settled.pulled)
    merged: list[str] = list(settled.merged)
    review_pulled: list[str] = []
    pushed_commits = 0
    upstream_set = False

    def keep_index() -> None:  # only if the merge changed files
        if refresh is not None and (pulled or review):
            _refresh(refresh, notes)

    try:
        for _ in range(PUSH_TRIES):
            ref = _fetch(root, remote, branch)
            with lock:
                # What other commands wrote while git fetched: the merge starts from a work
                # tree whose own files are all committed.
                later = _commit(root, identity, f"kenomem sync from {_host()}")
                committed += [p for p in later if p not in committed]
                outcome = _merge(root, git_dir, remote, branch, ref, identity) if ref else NONE
                if outcome.copies:
                    _commit(root, identity, "kenomem sync: the other side's edits, kept for review")
            pulled += [p for p in outcome.changed if p not in pulled]
            merged += [p for p in outcome.merged if p not in merged]
            review += outcome.copies
            review_pulled += [p for p in outcome.copies_pulled if p not in review_pulled]
            first = not upstream
            ahead = _ahead(root, ref)
            push = ["push", *(["-u"] if first else []), remote, f"HEAD:refs/heads/{branch}"]
            done = git(root, *push, timeout=NETWORK_TIMEOUT, check=False)
            if done.code == 0:
                pushed_commits, upstream_set = ahead, first
                break
            if not refused_as_behind(done.err):
                raise _unreachable(remote, done, "push")
        else:
            raise SyncError(
                f"the push to {remote} was refused {PUSH_TRIES} times: the remote kept moving",
                hint="run kenomem sync again; your commits are kept locally",
            )
    except KenomemError:  # a push that failed: what the merge wrote is indexed all the same
        keep_index()
        raise
    keep_index()
    command = REVIEW_COMMAND if review or review_pulled else ""
    return SyncResult(str(root), False, branch, remote, committed, pulled, review,
                      pushed_commits > 0, upstream_set, changes, plan.left, notes, merged,
                      review_pulled, command, pushed_commits)  # fmt: skip


def _refresh(refresh: Callable[[], object], notes: list[str]) -> None:
    """Bring the index in step with what the merge wrote; a failure is said, not raised:
    the files are merged and committed, and the next command's change scan indexes them."""
    try:
        refresh()
    except (KenomemError, OSError) as exc:
        why = exc.message if isinstance(exc, KenomemError) else (exc.strerror or str(exc))
        notes.append(f"the index was not brought in step with the merge ({why}): the next "
                     "kenomem command does it")  # fmt: skip


def _ahead(root: Path, ref: str) -> int:
    """How many commits HEAD has that the fetched remote branch (`ref`; "" when the
    remote has no such branch yet) does not: what a push sends."""
    span = f"{ref}..HEAD" if ref else "HEAD"
    done = git(root, "rev-list", "--count", span, check=False)
    return int(done.out.strip()) if done.code == 0 and done.out.strip().isdigit() else 0


def _planned(root: Path, plan: SyncPlan, unfinished: bool) -> SyncResult:
    notes = [] if plan.commit else ["nothing to commit"]
    if unfinished:
        notes.append("would first finish the merge an earlier sync left unfinished")
    incoming_paths: list[str] = []
    if plan.upstream:
        incoming_paths = git_paths(root, "diff", "--name-only", "HEAD...@{u}", check=False)
        notes.append(
            f"would pull and merge {counted(len(incoming_paths), 'file')} from {plan.upstream} "
            "(as last fetched)"
        )
        named, total = incoming.refusals(root, "@{u}")
        if named:
            notes.append(f"would refuse it all: {incoming.describe(named, total)}")
        notes.append(f"would push to {plan.upstream}")
    else:
        notes.append(f"would fetch from {plan.remote}, merge {plan.branch} if it is there")
        notes.append(f"would push and set the upstream to {plan.remote}/{plan.branch}")
    return SyncResult(str(root), True, plan.branch, plan.remote, plan.commit, incoming_paths,
                      [], False, False, plan.setup, plan.left, notes, [], [], "", 0)  # fmt: skip


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
    return git_dir


def _check_merge(root: Path, git_dir: Path) -> bool:
    """Refuse a merge in progress that is not one kenomem began (`resume.py`); whether
    one kenomem began is left to finish."""
    if not (git_dir / "MERGE_HEAD").exists():
        return False
    if resume.begun(git_dir) is not None:
        return True
    unmerged = _unmerged(root)
    raise SyncError(
        "a merge is in progress in the vault's repository"
        + (f"; still conflicting: {', '.join(map(incoming.shown, unmerged))}" if unmerged else ""),
        hint="resolve the files, git add them and git commit, then kenomem sync; or undo "
        "the merge with git merge --abort",
    )


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
    spec = pathspecs(own)
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


class Merge(NamedTuple):
    """What merging the fetched branch did here."""

    changed: list[str]  # the files it changed (brought, merged, removed)
    merged: list[str]  # of those, the files both sides changed, merged by kenomem's rules
    copies: list[str]  # review copies it wrote here, not committed yet
    copies_pulled: list[str]  # review copies it brought, written by another machine


NONE = Merge([], [], [], [])  # no branch to merge yet


def _merge(
    root: Path, git_dir: Path, remote: str, branch: str, ref: str, identity: list[str]
) -> Merge:
    """Merge the fetched branch (at `ref`), once what it brings is checked."""
    name = f"{remote}/{branch}"
    incoming.check(root, ref, remote, branch)
    before = git(root, "rev-parse", "-q", "--verify", "HEAD", check=False).out.strip()
    theirs = git(root, "rev-parse", "--verify", f"{ref}^{{commit}}").out.strip()
    untracked_before = set(_untracked(root))
    resume.begin(git_dir, before, theirs)
    # With one merge base, git leaves the files both sides changed to this process
    # (`premerge.py`); else the real driver merges them, file by file.
    bases = git(root, "merge-base", "--all", "HEAD", theirs, check=False).out.split()
    driver = premerge.LEAVE if len(bases) == 1 else setup.driver_command()
    merged: list[str] = []
    try:
        done = git(
            root,
            "merge",
            "--no-edit",
            "--no-commit",
            "-q",
            "-m",
            f"kenomem sync: merge {name}",
            theirs,
            config=[*identity, f"merge.{setup.DRIVER}.driver={driver}"],
            check=False,
        )
    except SyncError as exc:  # past its timeout, git stopped: settled as by the next sync
        resume.settle(root, git_dir, identity, name)
        raise SyncError(
            exc.message,
            hint="nothing was pushed, and no merge is left half-done: the vault is as it "
            "was before the merge, or the merge is finished by kenomem's rules; run "
            "kenomem sync again",
        ) from exc
    if (git_dir / "MERGE_HEAD").exists():
        merged = resume.conclude(root, git_dir, identity, name)
        if len(bases) > 1:  # the real driver merged them, in git's own process
            merged = sorted({*merged, *_both_changed(root, bases, before, theirs)})
    elif done.code != 0:
        resume.settle(root, git_dir, identity, name)  # put back what it wrote, if anything
        raise SyncError(
            f"git merge {name} failed: {last_line(done.err or done.out)}",
            hint="run git status in the vault; nothing was pushed",
        )
    else:
        resume.end(git_dir)  # a fast-forward, or nothing to merge
    copies = sorted(set(_untracked(root)) - untracked_before)
    if not before:
        return Merge([], merged, copies, [])
    changed = git_paths(root, "diff", "--name-only", before, "HEAD")
    added = git_paths(root, "diff", "--name-only", "--diff-filter=A", before, "HEAD")
    return Merge(changed, merged, copies, _review_copies(root, added))


def _review_copies(root: Path, paths: list[str]) -> list[str]:
    """Of the memory files `paths`, the review copies (read as the merge left them)."""
    found = []
    for path in paths:
        if not premerge.merged_by_driver(path):
            continue
        try:
            if resume.is_review_copy(root, path):
                found.append(path)
        except UnsafePath:  # not written through a link: not one of kenomem's copies
            continue
    return found


def _both_changed(root: Path, bases: list[str], ours: str, theirs: str) -> list[str]:
    """The memory files and buffer days both sides changed since their merge bases, and
    that differ between the two: those git gave the merge driver."""
    differ = set(git_paths(root, "diff", "--name-only", "--no-renames", ours, theirs))
    sides = []
    for tip in (ours, theirs):
        changed: set[str] = set()
        for base in bases:
            changed.update(git_paths(root, "diff", "--name-only", "--no-renames", base, tip))
        sides.append(changed)
    return sorted(p for p in differ & sides[0] & sides[1] if premerge.merged_by_driver(p))


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
