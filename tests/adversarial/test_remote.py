"""A git remote is a stranger (docs/security.md): whoever can push to it chooses what
`kenomem sync` fetches. A remote the test controls pushes each payload (harmless markers,
no working exploit): every one is refused before git touches the vault, the commit and the
path named, nothing merged, HEAD and the work tree as they were. And `sync` is crash-safe:
killed with SIGKILL at any of its git steps, or with a `git merge` past its timeout, the next
sync finishes the merge by kenomem's rules, never with "ours" in silence."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kenomem.errors import SyncError
from kenomem.files import buffer, fm
from kenomem.share import git as gitrun
from kenomem.share.merge import MERGE_OF
from kenomem.share.sync import SyncRequest, sync
from tests.adversarial.hostile import DOORS
from tests.share.helpers import (
    MARKERS,
    console_script,
    copy_world,
    crafted_commit,
    git,
    git_env,
    kenomem,
    tree_state,
    two_machines,
    vault_files,
    work_tree,
)

pytestmark = pytest.mark.slow

MEMORIES = 12
DAY = "buffer/2026-03-02.md"


def memory(i: int, *, count: int = 2, tags: tuple[str, ...] = ("base",), body: str = "") -> str:
    return (
        f"---\nid: mem_20260301_100000_{i:04d}\ntype: semantic\ntitle: Fact number {i}\n"
        f"tags: [{', '.join(tags)}]\ncreated: 2026-03-01T10:00:00Z\n"
        f"last_accessed: 2026-03-01T10:00:00Z\naccess_count: {count}\nimportance: 5\n"
        f"status: active\n---\n\nFact number {i} holds.{body}\n"
    )


def day(*entries: tuple[int, str]) -> str:
    """A buffer day with an entry at 10:00:0S for each (S, text)."""
    return "---\ndate: 2026-03-02\nconsolidated: null\n---\n" + "".join(
        f"\n## 10:00:0{second} -\n{text}\n" for second, text in entries
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare remote and two clones sharing a vault of a dozen memories and a buffer day,
    as built once: each test copies it (`copy_world`)."""
    top = tmp_path_factory.mktemp("world")
    _, a, b, env = two_machines(top)
    for i in range(MEMORIES):
        (a / f"semantic/m{i:02d}.md").write_text(memory(i), encoding="utf-8")
    (a / "semantic/a-only.md").write_text(memory(90), encoding="utf-8")
    (a / DAY).write_text(day((0, "logged first")), encoding="utf-8")
    kenomem(a, env, "sync")
    kenomem(b, env, "sync")
    return top


def failed_sync(root: Path, env: dict[str, str]) -> str:
    done = kenomem(root, env, "sync", check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "unexpected" not in done.stderr and "Traceback" not in done.stderr
    return done.stderr


# -- what a remote pushes ------------------------------------------------------------------


@pytest.fixture(scope="module")
def victim(world: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A copy of the world for the payloads: (attacker's clone, victim's clone)."""
    top = tmp_path_factory.mktemp("payloads")
    _, a, b = copy_world(world, top)
    (top / "outside.txt").write_text("a file of the victim's, outside the vault\n")
    return a, b


def payloads(top: Path, attacker: Path, env: dict[str, str]) -> dict[str, list[tuple]]:
    ignore = (attacker / ".gitignore").read_text(encoding="utf-8")
    attributes = (attacker / ".gitattributes").read_text(encoding="utf-8")
    head = git(attacker, env, "rev-parse", "HEAD").strip()
    outside = str(top / "outside.txt")
    return {
        "an index segment": [("100644", b"marker, not a segment\n",
                              ".kenomem/index/whoosh/_MAIN_999.toc")],
        "a lock that is a symlink": [("120000", outside.encode(), ".kenomem/lock")],
        "a file named .kenomem": [("100644", b"marker\n", ".kenomem")],
        "a .kenomem in a memory folder": [("100644", b"marker\n", "semantic/.kenomem/x.md")],
        "a symlink in semantic/": [("120000", outside.encode(), "semantic/outside.md")],
        "a submodule": [("160000", head.encode(), "semantic/module")],
        "a file outside the vault's folders": [("100755", b"#!/bin/sh\necho marker\n",
                                                "scripts/run.sh")],
        "a .gitignore that un-ignores .kenomem/": [
            ("100644", (ignore.replace(".kenomem/\n", "") + "!.kenomem/\n").encode(),
             ".gitignore")
        ],
        "a .gitattributes that merges memories as text": [
            ("100644", (attributes + "semantic/**/*.md merge=union\n").encode(),
             ".gitattributes")
        ],
    }  # fmt: skip


PAYLOADS = [
    ("an index segment", ".kenomem/index/whoosh/_MAIN_999.toc"),
    ("a lock that is a symlink", ".kenomem/lock"),
    ("a file named .kenomem", ".kenomem"),
    ("a .kenomem in a memory folder", "semantic/.kenomem/x.md"),
    ("a symlink in semantic/", "semantic/outside.md"),
    ("a submodule", "semantic/module"),
    ("a file outside the vault's folders", "scripts/run.sh"),
    ("a .gitignore that un-ignores .kenomem/", ".gitignore"),
    ("a .gitattributes that merges memories as text", ".gitattributes"),
]


@pytest.mark.parametrize(("payload", "path"), PAYLOADS, ids=[p for p, _ in PAYLOADS])
def test_a_payload_from_the_remote_is_refused_and_the_vault_unchanged(
    victim: tuple[Path, Path], payload: str, path: str
) -> None:
    attacker, root = victim
    top = root.parent
    env = git_env(top)
    base = git(attacker, env, "rev-parse", "HEAD").strip()
    # The payload comes with a memory of the most ordinary kind: nothing of it is merged.
    entries = [*payloads(top, attacker, env)[payload], ("100644", memory(99).encode(),
               "semantic/ordinary.md")]  # fmt: skip
    commit = crafted_commit(attacker, env, entries, f"add {payload}")
    git(attacker, env, "push", "-q", "origin", f"{commit}:refs/heads/main")
    try:
        kenomem(root, env, "recall", "fact", "--no-touch")  # .kenomem/ in use, as anywhere
        before = tree_state(root, env)
        err = failed_sync(root, env)
        assert path in err and "never merges" in err
        assert git(attacker, env, "rev-parse", "--short", commit).strip() in err
        assert "whoever controls origin must remove it" in err
        assert tree_state(root, env) == before
        assert not (root / ".git" / "MERGE_HEAD").exists()
        state = root / ".kenomem"
        assert state.is_dir() and not state.is_symlink()
        assert not (state / "lock").is_symlink()
        assert not (state / "index" / "whoosh" / "_MAIN_999.toc").exists()
        assert (top / "outside.txt").read_text() == "a file of the victim's, outside the vault\n"
        assert not (root / "semantic" / "ordinary.md").exists()
        kenomem(root, env, "recall", "fact", "--no-touch")  # the vault still works
    finally:
        git(attacker, env, "push", "-q", "-f", "origin", f"{base}:refs/heads/main")


def test_a_dry_run_says_it_would_refuse_and_changes_nothing(victim: tuple[Path, Path]) -> None:
    attacker, root = victim
    env = git_env(root.parent)
    base = git(attacker, env, "rev-parse", "HEAD").strip()
    entries = [("120000", b"/etc/passwd", "semantic/passwd.md")]
    commit = crafted_commit(attacker, env, entries, "a link")
    git(attacker, env, "push", "-q", "origin", f"{commit}:refs/heads/main")
    try:
        git(root, env, "fetch", "-q", "origin")  # a dry run reads the refs as last fetched
        before = tree_state(root, env)
        done = kenomem(root, env, "sync", "--dry-run")
        assert "would refuse it all: semantic/passwd.md (a symlink; commit" in done.stdout
        assert tree_state(root, env) == before
    finally:
        git(attacker, env, "push", "-q", "-f", "origin", f"{base}:refs/heads/main")


def test_a_first_sync_without_common_history_is_checked_too(
    victim: tuple[Path, Path], tmp_path: Path
) -> None:
    attacker, _ = victim
    env = git_env(attacker.parent)
    base = git(attacker, env, "rev-parse", "HEAD").strip()
    commit = crafted_commit(
        attacker, env, [("100644", b"marker\n", ".kenomem/index/whoosh/_MAIN_999.toc")], "x"
    )
    git(attacker, env, "push", "-q", "origin", f"{commit}:refs/heads/main")
    try:
        fresh = tmp_path / "fresh"
        kenomem(fresh, env, "init", str(fresh), "--git")
        git(fresh, env, "checkout", "-q", "-b", "main")
        git(fresh, env, "remote", "add", "origin", str(attacker.parent / "remote.git"))
        before = work_tree(fresh)
        err = failed_sync(fresh, env)
        assert ".kenomem/index/whoosh/_MAIN_999.toc" in err
        assert git(attacker, env, "rev-parse", "--short", commit).strip() in err
        assert work_tree(fresh) == before
        assert git(fresh, env, "log", "--format=%s") == f"kenomem sync from {host()}\n"
        assert not (fresh / ".kenomem" / "index" / "whoosh" / "_MAIN_999.toc").exists()
    finally:
        git(attacker, env, "push", "-q", "-f", "origin", f"{base}:refs/heads/main")


def host() -> str:
    import socket

    return socket.gethostname().split(".")[0] or "localhost"


def test_a_newline_in_a_file_name_never_splits_syncs_output(world: Path, tmp_path: Path) -> None:
    _, a, b = copy_world(world, tmp_path)
    env = git_env(tmp_path)
    name = "semantic/two\nlines.md"
    git(a, env, "push", "-q", "origin",
        crafted_commit(a, env, [("100644", memory(98).encode(), name)], "odd name")
        + ":refs/heads/main")  # fmt: skip
    done = kenomem(b, env, "sync")
    assert "    semantic/two^Jlines.md\n" in done.stdout
    assert not any(line.startswith("lines.md") for line in done.stdout.splitlines())
    assert (b / name).exists()
    (b / "left\nalone.txt").write_text("not the vault's\n")
    doc = json.loads(kenomem(b, env, "sync", "--json").stdout)
    assert doc["left"] == ["left\nalone.txt"]
    done = kenomem(b, env, "sync")
    assert "left\nalone" not in done.stdout and "left^Jalone.txt" in done.stdout


# -- a sync killed, or a merge stopped --------------------------------------------------------


def edit_both_sides(a: Path, b: Path, env: dict[str, str]) -> None:
    """Every memory changed on both machines (counts, tags, bodies), one body by both
    differently (a review copy), a new memory and a logged entry on each; a's pushed, b's
    left for its sync to commit."""
    for i in range(MEMORIES):
        a_tags = ("base", f"a{i}") if i % 3 == 0 else ("base",)
        b_tags = ("base", f"b{i}") if i % 4 == 0 else ("base",)
        a_body = {0: " A says so.", 1: " A edit."}.get(i, "")
        b_body = {0: " B says so.", 2: " B edit."}.get(i, "")
        (a / f"semantic/m{i:02d}.md").write_text(
            memory(i, count=3 + i % 2, tags=a_tags, body=a_body), encoding="utf-8"
        )
        (b / f"semantic/m{i:02d}.md").write_text(
            memory(i, count=5, tags=b_tags, body=b_body), encoding="utf-8"
        )
    (a / "semantic/new-a.md").write_text(memory(50), encoding="utf-8")
    (a / "semantic/a-only.md").write_text(memory(90, body=" Only a."), encoding="utf-8")
    (b / "semantic/new-b.md").write_text(memory(51), encoding="utf-8")
    (a / DAY).write_text(day((0, "logged first"), (1, "logged on a")), encoding="utf-8")
    (b / DAY).write_text(day((0, "logged first"), (2, "logged on b")), encoding="utf-8")
    git(a, env, "add", "-A")
    git(a, env, "commit", "-qm", "a's edits")
    git(a, env, "push", "-q", "origin", "main")


def check_merged(a: Path, b: Path, env: dict[str, str]) -> None:
    """Every edit of both sides, by kenomem's rules, once; both clones equal and clean."""
    files = vault_files(b)
    assert files == vault_files(a)
    assert git(a, env, "rev-parse", "HEAD") == git(b, env, "rev-parse", "HEAD")
    for root in (a, b):
        assert git(root, env, "status", "--porcelain", "--untracked-files=all") == ""
        assert not (root / ".git" / "KENOMEM_MERGE").exists()
        assert not list(root.glob(".merge_file_*"))
    assert not any(MARKERS.search(text) for text in files.values())
    metas = {}
    for rel, text in files.items():
        if rel.startswith("semantic/"):
            parts = fm.split(text, rel)
            metas[rel] = (fm.parse(parts.fm_text, path=rel), text[parts.body_start :])
    for i in range(MEMORIES):
        meta, body = metas[f"semantic/m{i:02d}.md"]
        # 2 at the base, a counted 1 + i % 2 more, b 3 more.
        assert int(meta["access_count"]) == 2 + (1 + i % 2) + 3, (i, meta)
        expected = {"base"} | ({f"a{i}"} if i % 3 == 0 else set())
        assert set(meta["tags"]) == expected | ({f"b{i}"} if i % 4 == 0 else set()), i
        if i == 1:
            assert "A edit." in body
        if i == 2:
            assert "B edit." in body
    copies = [(m, body) for m, body in metas.values() if m.get(MERGE_OF)]
    assert len(copies) == 1 and copies[0][0][MERGE_OF] == "mem_20260301_100000_0000"
    both = metas["semantic/m00.md"][1] + copies[0][1]
    assert "A says so." in both and "B says so." in both
    assert "semantic/new-a.md" in metas and "semantic/new-b.md" in metas
    assert "Only a." in metas["semantic/a-only.md"][1]
    logged = [e.text for e in buffer.parse_day(DAY, files[DAY]).entries]
    assert logged == ["logged first", "logged on a", "logged on b"]


# A `git` before the real one on PATH: at the n-th run of one subcommand it says where it
# is and waits, before or after running the real git, until the test kills it or lets it go.
STOPPING_GIT = """#!/bin/sh
sub=""; skip=0
for arg in "$@"; do
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  case "$arg" in -c) skip=1;; -*) ;; *) sub="$arg"; break;; esac
done
wait_here() { echo $$ > "$STOP_DIR/reached"; while [ ! -e "$STOP_DIR/go" ]; do sleep 0.05; done; }
n=0
if [ "$sub" = "$STOP_SUB" ]; then
  n=$(cat "$STOP_DIR/count" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$STOP_DIR/count"
fi
if [ "$n" = "$STOP_N" ] && [ "$STOP_WHEN" = before ]; then wait_here; fi
"$REAL_GIT" "$@"; code=$?
if [ "$n" = "$STOP_N" ] && [ "$STOP_WHEN" = after ]; then wait_here; fi
exit $code
"""

# The git steps of b's sync that change something, in order: its own changes added and
# committed, the fetch, the merge, the files git left unmerged merged and added, the merge
# committed, the review copy added and committed, the push (a second commit of b's own
# changes after the fetch finds none: it makes no step).
STEPS = [("add", 1), ("commit", 1), ("fetch", 1), ("merge", 1), ("add", 2), ("commit", 2),
         ("add", 3), ("commit", 3), ("push", 1)]  # fmt: skip


def killed_sync(b: Path, env: dict[str, str], tmp: Path, step: tuple[str, int], when: str) -> None:
    """`kenomem sync` in b, killed with SIGKILL when its git reaches `step` (`before` it
    runs, or `after`, the step done but not seen by sync)."""
    bin_dir, stop = tmp / "bin", tmp / "stop"
    bin_dir.mkdir()
    stop.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(STOPPING_GIT)
    wrapper.chmod(0o755)
    stopping = {
        **env,
        "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}",
        "REAL_GIT": str(shutil.which("git")),
        "STOP_DIR": str(stop),
        "STOP_SUB": step[0],
        "STOP_N": str(step[1]),
        "STOP_WHEN": when,
    }
    process = subprocess.Popen(
        [*console_script(), "sync", "--vault", str(b)],
        env=stopping, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not (stop / "reached").exists() and process.poll() is None:
        assert time.monotonic() < deadline, "the sync neither reached the step nor ended"
        time.sleep(0.02)
    if process.poll() is None:
        process.kill()
    process.wait()
    if (stop / "reached").exists():
        waiting = int((stop / "reached").read_text())
        if when == "before":  # the step never runs
            os.killpg(waiting, signal.SIGKILL)
        (stop / "go").touch()  # after: the step ran; the wrapper just ends


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups")
@settings(DOORS, max_examples=2, derandomize=True)
@given(step=st.sampled_from(STEPS), when=st.sampled_from(["before", "after"]))
@example(step=("merge", 1), when="after")  # git merged, the sync died before it committed
@example(step=("add", 2), when="before")  # the merged files written, not staged
def test_a_sync_killed_at_any_step_is_finished_by_the_next(
    world: Path, tmp_path_factory: pytest.TempPathFactory, step: tuple[str, int], when: str
) -> None:
    top = tmp_path_factory.mktemp("killed")
    _, a, b = copy_world(world, top)
    env = git_env(top)
    edit_both_sides(a, b, env)
    killed_sync(b, env, top, step, when)
    kenomem(b, env, "sync")
    kenomem(a, env, "sync")
    check_merged(a, b, env)


# A `git` that is slow to end its merge: it merged, and has not said so.
SLOW_END = STOPPING_GIT.split("wait_here()")[0] + (
    '"$REAL_GIT" "$@"; code=$?\n[ "$sub" = merge ] && exec sleep 60\nexit $code\n'
)


def slow_checkout(b: Path, env: dict[str, str]) -> None:
    """A file of theirs whose checkout never ends, as a smudge filter that waits on the
    network would (git-lfs is one): the merge stops in its middle, the index locked and
    the work tree half written (`a-only.md`, before it in git's order, is theirs)."""
    (b / ".git" / "info" / "attributes").write_text("semantic/new-a.md filter=slow\n")
    git(b, env, "config", "filter.slow.smudge", "sleep 60")


@pytest.mark.parametrize("where", ["end", "middle"])
def test_a_merge_past_its_timeout_ends_safe_and_the_next_sync_finishes_it(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    _, a, b = copy_world(world, tmp_path)
    env = git_env(tmp_path)
    edit_both_sides(a, b, env)
    theirs = git(a, env, "rev-parse", "HEAD")
    for key, value in {**env, "REAL_GIT": str(shutil.which("git"))}.items():
        monkeypatch.setenv(key, value)
    if where == "end":
        (tmp_path / "bin").mkdir()
        (tmp_path / "bin" / "git").write_text(SLOW_END)
        (tmp_path / "bin" / "git").chmod(0o755)
        monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{env['PATH']}")
    else:
        slow_checkout(b, env)
    monkeypatch.setattr(gitrun, "LOCAL_TIMEOUT", 3.0)
    with pytest.raises(SyncError, match="git merge took more than 3s and was stopped") as caught:
        sync(b, SyncRequest())
    monkeypatch.undo()
    assert "no merge is left half-done" in (caught.value.hint or "")
    assert not (b / ".git" / "index.lock").exists() and not list(b.glob(".merge_file_*"))
    assert not (b / ".git" / "MERGE_HEAD").exists()
    status = git(b, env, "status", "--porcelain", "--untracked-files=all")
    if where == "end":  # git had merged: the merge is committed, by kenomem's rules
        assert git(b, env, "rev-parse", "HEAD^2") == theirs
        assert status == "?? semantic/m00-merged.md\n"  # committed by the next sync
        assert "access_count: 7" in (b / "semantic/m01.md").read_text()  # 2, +2 on a, +3 on b
    else:  # stopped in its middle: the vault is as it was before the merge
        assert git(b, env, "log", "-1", "--format=%s").startswith("kenomem sync from")
        assert status == ""
        assert (b / "semantic/a-only.md").read_text() == memory(90)
        assert "access_count: 5" in (b / "semantic/m01.md").read_text()
        (b / ".git" / "info" / "attributes").unlink()
        git(b, env, "config", "--unset", "filter.slow.smudge")
    kenomem(b, env, "sync")
    kenomem(a, env, "sync")
    check_merged(a, b, env)
