"""`kenomem sync` refusing what it cannot do, with the cause and the fix, and leaving the
repository as git left it; `--dry-run`, `--setup` and what is never committed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.share.helpers import MARKERS, git, git_env, kenomem, two_machines, vault_files

pytestmark = pytest.mark.slow


def failed(root: Path, env: dict[str, str], *args: str) -> str:
    done = kenomem(root, env, "sync", *args, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "unexpected" not in done.stderr
    return done.stderr


def test_a_vault_that_is_no_repository(tmp_path: Path) -> None:
    env = git_env(tmp_path)
    kenomem(tmp_path / "v", env, "init", str(tmp_path / "v"))
    err = failed(tmp_path / "v", env)
    assert "not a git repository" in err and "kenomem init --git" in err


def test_no_remote_then_an_unreachable_one(tmp_path: Path) -> None:
    env = git_env(tmp_path)
    root = tmp_path / "v"
    kenomem(root, env, "init", str(root), "--git")
    err = failed(root, env)
    assert "no git remote" in err and "git remote add origin" in err
    git(root, env, "remote", "add", "origin", str(tmp_path / "nowhere.git"))
    head_before = subprocess.run(
        ["git", "status", "--porcelain"], cwd=root, env=env, capture_output=True, text=True
    ).stdout
    err = failed(root, env)
    assert "git fetch to origin failed" in err and "git remote -v" in err
    assert head_before  # the local commit is kept: only the fetch failed
    assert git(root, env, "log", "--oneline").count("\n") == 1


def test_a_detached_head_and_a_rebase_in_progress(tmp_path: Path) -> None:
    _, a, _, env = two_machines(tmp_path)
    git(a, env, "checkout", "-q", "--detach")
    assert "detached HEAD" in failed(a, env)
    git(a, env, "checkout", "-q", "main")
    (a / ".git" / "rebase-merge").mkdir()
    err = failed(a, env)
    assert "rebase is in progress" in err and "git rebase --abort" in err


def test_a_merge_that_still_conflicts_is_left_as_git_left_it(tmp_path: Path) -> None:
    _, a, b, env = two_machines(tmp_path)
    for root, words in ((a, "Adrian on a"), (b, "Adrian on b")):
        (root / "foundation.md").write_text(f"# Foundation\n\n{words}\n", encoding="utf-8")
        kenomem(root, env, "remember", f"A fact noted on {root.name}")
    kenomem(a, env, "sync")
    err = failed(b, env)
    assert "still conflicts in: foundation.md" in err and "git merge --abort" in err
    assert (b / ".git" / "MERGE_HEAD").exists()
    # git's markers in the human's file, as git left it; none in a memory file.
    files = vault_files(b)
    assert MARKERS.search(files["foundation.md"])
    assert not any(MARKERS.search(t) for p, t in files.items() if p != "foundation.md")
    err = failed(b, env)
    assert "a merge is in progress" in err and "foundation.md" in err
    git(b, env, "merge", "--abort")
    (b / "foundation.md").write_text("# Foundation\n\nAdrian on a\n", encoding="utf-8")
    git(b, env, "commit", "-qam", "take a's foundation")
    kenomem(b, env, "sync")  # the conflict is gone: merged and pushed


def test_dry_run_changes_nothing_and_says_what_it_would_do(tmp_path: Path) -> None:
    _, a, _, env = two_machines(tmp_path)
    kenomem(a, env, "remember", "Deploys run on Fridays")
    (a / "notes.txt").write_text("not the vault's\n", encoding="utf-8")
    head = git(a, env, "rev-parse", "HEAD")
    status = git(a, env, "status", "--porcelain")
    doc = json.loads(kenomem(a, env, "sync", "--dry-run", "--json").stdout)
    assert doc["dry_run"] is True
    assert [p for p in doc["committed"] if p.startswith("semantic/")]
    assert doc["left"] == ["notes.txt"]
    assert git(a, env, "rev-parse", "HEAD") == head
    assert git(a, env, "status", "--porcelain") == status
    doc = json.loads(kenomem(a, env, "sync", "--json").stdout)
    assert doc["pushed"] is True and "notes.txt" not in doc["committed"]
    tracked = git(a, env, "ls-files")
    assert ".kenomem/" not in tracked and "notes.txt" not in tracked


def test_setup_is_idempotent(tmp_path: Path) -> None:
    _, a, _, env = two_machines(tmp_path)
    before = (a / ".gitattributes").read_text(), (a / ".gitignore").read_text()
    doc = json.loads(kenomem(a, env, "sync", "--setup", "--json").stdout)
    assert doc["setup"] == []
    assert ((a / ".gitattributes").read_text(), (a / ".gitignore").read_text()) == before
    driver = git(a, env, "config", "--local", "merge.kenomem.driver")
    assert "-m kenomem merge-driver %O %A %B %P" in driver


def test_without_a_git_identity_kenomem_commits_as_itself(tmp_path: Path) -> None:
    _, a, _, env = two_machines(tmp_path)
    bare = {k: v for k, v in env.items() if not k.startswith(("GIT_AUTHOR", "GIT_COMMITTER"))}
    kenomem(a, bare, "remember", "Deploys run on Fridays")
    done = kenomem(a, bare, "sync")
    assert "no git identity is configured" in done.stderr
    assert git(a, env, "log", "-1", "--format=%an <%ae>").startswith("kenomem <kenomem@")


def test_the_merge_driver_without_its_arguments(tmp_path: Path) -> None:
    done = kenomem(tmp_path, git_env(tmp_path), "merge-driver", check=False)
    assert done.returncode == 2 and "usage: kenomem merge-driver" in done.stderr


def test_a_memory_deleted_on_one_side_and_touched_on_the_other_stays(tmp_path: Path) -> None:
    _, a, b, env = two_machines(tmp_path)
    mem_id = json.loads(kenomem(a, env, "remember", "Deploys run on Fridays", "--json").stdout)[
        "id"
    ]
    kenomem(a, env, "sync")
    kenomem(b, env, "sync")
    path = next(p for p in vault_files(a) if p.startswith("semantic/"))
    (a / path).unlink()  # deleted by hand on a
    kenomem(a, env, "sync")
    kenomem(b, env, "recall", "deploys fridays")  # touched on b
    kenomem(b, env, "sync")
    assert (b / path).exists() and mem_id in (b / path).read_text()
    assert git(b, env, "status", "--porcelain") == ""
    kenomem(a, env, "sync")
    assert (a / path).exists()


def test_a_push_refused_because_the_remote_moved_is_merged_again_never_forced(
    tmp_path: Path,
) -> None:
    _, a, b, env = two_machines(tmp_path)
    b_id = json.loads(kenomem(b, env, "remember", "Noted on b", "--json").stdout)["id"]
    git(b, env, "add", "-A")
    git(b, env, "commit", "-qm", "b's memory")
    # Just before a's push, b pushes first: a's push is refused as behind.
    hook = a / ".git" / "hooks" / "pre-push"
    mark = tmp_path / "b-pushed"
    hook.write_text(
        "#!/bin/sh\n"
        f"[ -e '{mark}' ] && exit 0\n"
        f"touch '{mark}'\n"
        f"env -u GIT_DIR -u GIT_INDEX_FILE -u GIT_WORK_TREE git -C '{b}' push -q origin main\n"
    )
    hook.chmod(0o755)
    a_id = json.loads(kenomem(a, env, "remember", "Noted on a", "--json").stdout)["id"]
    doc = json.loads(kenomem(a, env, "sync", "--json").stdout)
    assert mark.exists() and doc["pushed"] is True
    assert any(b_id in (a / p).read_text() for p in doc["pulled"])
    kenomem(b, env, "sync")
    texts = "".join(vault_files(b).values())
    assert a_id in texts and b_id in texts  # neither push overwrote the other


def test_a_repository_that_tracks_the_index_is_refused(tmp_path: Path) -> None:
    _, a, _, env = two_machines(tmp_path)
    kenomem(a, env, "remember", "Deploys run on Fridays")  # builds .kenomem/
    git(a, env, "add", "-f", ".kenomem")
    git(a, env, "commit", "-qm", "the index too")
    err = failed(a, env)
    assert "tracks .kenomem/" in err and "git rm -r -q --cached .kenomem" in err
    git(a, env, "rm", "-r", "-q", "--cached", ".kenomem")
    git(a, env, "commit", "-qm", "stop tracking .kenomem/")
    kenomem(a, env, "sync")
