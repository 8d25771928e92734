"""The merge done in one process: git, given a driver that merges nothing, leaves each
file both sides changed unmerged (never committable as it is), and sync merges them all
from their stages by kenomem's rules."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kenomem.files import fm
from kenomem.share import premerge
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


def test_git_leaves_the_files_both_sides_changed_and_they_are_merged_in_one_process(
    tmp_path: Path,
) -> None:
    b, env, ref = touched_on_both(tmp_path)
    leave = f"merge.kenomem.driver={premerge.LEAVE}"
    done = subprocess.run(
        ["git", "-c", leave, "merge", "-q", "--no-commit", ref],
        cwd=b, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and "<<<<<<<" not in done.stdout
    (path,) = premerge.stages(git(b, env, "ls-files", "-u", "-z"))
    assert path.startswith("semantic/")
    assert count_in(b, path) == 2  # ours, no conflict marker
    refused = subprocess.run(
        ["git", "commit", "-q", "--no-edit"], cwd=b, env=env, capture_output=True, check=False
    )
    assert refused.returncode != 0  # git never commits it as it is: "ours" in silence
    assert premerge.merge_unmerged(b) == [path]
    assert count_in(b, path) == 3  # 1 touch on a, 2 on b
    git(b, env, "commit", "-q", "--no-edit")
    assert git(b, env, "status", "--porcelain") == ""


def test_sync_merges_in_one_process_and_leaves_no_record(tmp_path: Path) -> None:
    b, env, _ = touched_on_both(tmp_path)
    git(b, env, "reset", "-q", "--soft", "HEAD~1")  # as sync finds it: changes to commit
    doc = json.loads(kenomem(b, env, "sync", "--json").stdout)
    path = doc["pulled"][0]
    assert count_in(b, path) == 3
    assert not (b / ".git" / "KENOMEM_MERGE").exists()
    assert git(b, env, "status", "--porcelain") == ""
