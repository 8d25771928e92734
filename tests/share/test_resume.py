"""A merge a sync began and did not finish (`share/resume.py`), on a real repository: git
left memory files unmerged (their driver stopped), or git was stopped halfway through
writing the work tree. Both are settled by kenomem's rules, never "ours" in silence."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kenomem.share import premerge, resume
from tests.share.helpers import git, git_env


def memory(name: str, count: int, body: str = "") -> str:
    return (
        f"---\nid: mem_{name}\ntitle: {name}\naccess_count: {count}\n---\n\n{name} holds.{body}\n"
    )


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    """A repository whose `main` and `theirs` both changed memories since their base:
    HEAD is `main`."""
    env = git_env(tmp_path)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "vault"
    root.mkdir()
    git(root, env, "init", "-q", "-b", "main")
    (root / ".gitattributes").write_text("semantic/**/*.md merge=kenomem\n")
    (root / "semantic").mkdir()
    for name in ("a", "b", "c", "gone"):
        (root / f"semantic/{name}.md").write_text(memory(name, 3))
    git(root, env, "add", "-A")
    git(root, env, "commit", "-qm", "base")
    git(root, env, "checkout", "-q", "-b", "theirs")
    for name, count in (("a", 5), ("b", 6), ("c", 7)):
        (root / f"semantic/{name}.md").write_text(memory(name, count))
    (root / "semantic/gone.md").unlink()
    (root / "semantic/new.md").write_text(memory("new", 1))
    git(root, env, "add", "-A")
    git(root, env, "commit", "-qm", "theirs")
    git(root, env, "checkout", "-q", "main")
    (root / "semantic/b.md").write_text(memory("b", 4, " Ours says more."))
    git(root, env, "commit", "-qam", "ours")
    return root, env


def count(root: Path, name: str) -> int:
    text = (root / f"semantic/{name}.md").read_text()
    return int(text.split("access_count: ")[1].split("\n")[0])


def test_files_git_left_unmerged_are_merged_by_kenomems_rules_then_committed(
    repo: tuple[Path, dict[str, str]],
) -> None:
    root, env = repo
    ours, theirs = (git(root, env, "rev-parse", ref).strip() for ref in ("main", "theirs"))
    resume.begin(root / ".git", ours, theirs)
    # The driver died (killed, or could not start): git marks b.md as a conflict, with
    # ours left in the work tree.
    done = git_merge(root, env, "merge.kenomem.driver=false")
    assert done.returncode != 0 and (root / ".git/MERGE_HEAD").exists()
    settled = resume.settle(root, root / ".git", [], "origin/main")
    assert "finished the merge of origin/main" in settled.notes[0]
    assert git(root, env, "rev-parse", "HEAD^1", "HEAD^2").split() == [ours, theirs]
    assert count(root, "b") == 4 + 6 - 3  # both sides' touches
    assert "Ours says more." in (root / "semantic/b.md").read_text()
    assert count(root, "a") == 5 and (root / "semantic/new.md").exists()
    assert git(root, env, "status", "--porcelain") == ""
    assert resume.begun(root / ".git") is None
    assert set(settled.pulled) == {"semantic/a.md", "semantic/b.md", "semantic/c.md",
                                   "semantic/gone.md", "semantic/new.md"}  # fmt: skip


def git_merge(root: Path, env: dict[str, str], driver: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "-c", driver, "merge", "-q", "--no-commit", "theirs"],
        cwd=root, env=env, capture_output=True, check=False,
    )  # fmt: skip


def test_what_a_merge_stopped_halfway_wrote_is_put_back_and_nothing_else(
    repo: tuple[Path, dict[str, str]],
) -> None:
    root, env = repo
    ours, theirs = (git(root, env, "rev-parse", ref).strip() for ref in ("main", "theirs"))
    resume.begin(root / ".git", ours, theirs)
    # git merged (its index and work tree written, b.md left unmerged for sync) and was
    # stopped before it wrote MERGE_HEAD; it left a temporary file, and a review copy
    # was written.
    done = git_merge(root, env, f"merge.kenomem.driver={premerge.LEAVE}")
    assert done.returncode == 1
    for name in ("MERGE_HEAD", "MERGE_MSG", "MERGE_MODE"):
        (root / ".git" / name).unlink()
    (root / ".merge_file_Xy12Ab").write_text(memory("b", 6))
    copy = memory("copy", 0).replace("---\n\n", "merge_of: mem_b\n---\n\n")
    (root / "semantic/b-merged.md").write_text(copy)
    # And what was written since, by someone else: an edit of c.md, a new memory.
    (root / "semantic/c.md").write_text(memory("c", 7, " Edited since."))
    (root / "semantic/mine.md").write_text(memory("mine", 0))
    settled = resume.settle(root, root / ".git", [], "origin/main")
    assert settled.notes == ["semantic/c.md: changed since a stopped merge wrote it, left as it is"]
    assert git(root, env, "rev-parse", "HEAD").strip() == ours
    assert git(root, env, "status", "--porcelain", "--untracked-files=all") == (
        " M semantic/c.md\n?? semantic/mine.md\n"
    )
    assert count(root, "a") == 3 and count(root, "b") == 4 and count(root, "gone") == 3
    assert not (root / "semantic/new.md").exists() and not list(root.glob(".merge_file_*"))
    assert resume.begun(root / ".git") is None
