"""The merge done ahead in one process, and the shell line git runs instead of the
driver: the result merged ahead when git hands it the same two sides, else the driver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kenomem.files import fm
from kenomem.share import premerge, setup
from kenomem.share.sync import _changed_on_both
from tests.share.helpers import git, kenomem, two_machines

pytestmark = pytest.mark.slow


def touched_on_both(tmp_path: Path) -> tuple[Path, dict[str, str], str]:
    _, a, b, env = two_machines(tmp_path)
    kenomem(a, env, "remember", "Deploys run on Fridays", "--json")
    kenomem(a, env, "sync")
    kenomem(b, env, "sync")
    for root in (a, b, b):
        kenomem(root, env, "recall", "deploys fridays")
    kenomem(a, env, "sync")
    git(b, env, "commit", "-qam", "touched on b")
    git(b, env, "fetch", "-q", "origin")
    return b, env, "refs/remotes/origin/main"


def count_in(root: Path, path: str) -> int:
    text = (root / path).read_text(encoding="utf-8")
    return int(str(fm.parse(fm.split(text).fm_text)["access_count"]))


@pytest.mark.parametrize("ahead", [True, False])
def test_the_shell_line_leaves_a_file_merged_ahead_to_apply(tmp_path: Path, ahead: bool) -> None:
    b, env, ref = touched_on_both(tmp_path)
    paths = _changed_on_both(b, ref)
    assert len(paths) == 1 and paths[0].startswith("semantic/")
    git_dir = b / ".git"
    assert premerge.prepare(b, git_dir, ref, paths) == 1
    target = git_dir / premerge.FOLDER / paths[0]
    if not ahead:
        target.unlink()  # as for a file not merged ahead: the real driver runs
    line = premerge.driver_command(git_dir, setup.driver_command())
    git(b, env, "-c", f"merge.kenomem.driver={line}", "merge", "-q", "--no-commit", ref)
    # Merged ahead, git leaves ours (2 touches) until `apply` writes the result.
    assert count_in(b, paths[0]) == (2 if ahead else 3)
    assert premerge.apply(b, git_dir) == ([paths[0]] if ahead else [])
    assert count_in(b, paths[0]) == 3  # 1 touch on a, 2 on b
    git(b, env, "commit", "-q", "--no-edit")
    assert git(b, env, "status", "--porcelain") == ""


def test_sync_merges_ahead_and_cleans_up(tmp_path: Path) -> None:
    b, env, _ = touched_on_both(tmp_path)
    git(b, env, "reset", "-q", "--soft", "HEAD~1")  # as sync finds it: changes to commit
    doc = json.loads(kenomem(b, env, "sync", "--json").stdout)
    path = doc["pulled"][0]
    assert count_in(b, path) == 3
    assert not (b / ".git" / premerge.FOLDER).exists()
