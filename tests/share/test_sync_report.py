"""What `sync` tells each side of a memory both machines edited, and the index it leaves:
in step with what the merge wrote, so that `sync && doctor` exits 0 on both machines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kenomem.cli.output import Output
from kenomem.cli.render import share as render
from kenomem.files import fm
from kenomem.index import Filters
from kenomem.share.merge import MERGE_OF
from kenomem.share.sync import REVIEW_COMMAND, SyncResult
from kenomem.vault.core import CoreVault
from tests.share.helpers import git, kenomem, two_machines, vault_files

pytestmark = pytest.mark.slow


def synced(root: Path, env: dict[str, str]) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(kenomem(root, env, "sync", "--json").stdout)
    return doc


def told(doc: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> str:
    """The lines a person reads for the result `doc`."""
    capsys.readouterr()
    render.sync(Output(), SyncResult(**doc))
    return capsys.readouterr().out


def indexed_as_files(root: Path) -> bool:
    """Whether the index, as it is (no change scan run), holds every memory file of the
    vault at its path, and nothing else."""
    vault = CoreVault.open(root)
    hits = vault.engine.browse(Filters(statuses=()), "created", False, None).hits
    files = {}
    for rel, text in vault_files(root).items():
        if rel.split("/")[0] in ("semantic", "episodic", "procedural", "working", "archive"):
            files[str(fm.parse(fm.split(text, rel).fm_text, path=rel)["id"])] = rel
    return {hit.doc.id: hit.doc.path for hit in hits} == files


def test_both_sides_of_a_two_sided_edit_are_told_and_doctor_is_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, a, b, env = two_machines(tmp_path)
    monkeypatch.setenv("HOME", env["HOME"])  # the index is sealed for the user of that home
    made = json.loads(
        kenomem(a, env, "remember", "The staging database is postgres 15", "--json").stdout
    )
    db = made["path"]
    kenomem(a, env, "sync")
    kenomem(b, env, "sync")
    for root, version in ((a, "16"), (b, "15.4")):
        path = root / db
        path.write_text(path.read_text().replace("postgres 15", f"postgres {version}"))
    kenomem(a, env, "remember", "The office plant needs water on Mondays")
    kenomem(b, env, "remember", "The coffee machine is on the second floor")

    first = synced(a, env)  # a pushes its edit
    assert first["pushed"] is True and first["pushed_commits"] == 1
    assert first["merged"] == first["review"] == first["review_pulled"] == []
    assert first["review_command"] == ""

    second = synced(b, env)  # b merges: its text stays, a's is kept for review
    (copy,) = second["review"]
    assert second["merged"] == [db]
    assert second["review_command"] == REVIEW_COMMAND == "kenomem list --tag merge-review"
    assert second["pushed"] is True and second["pushed_commits"] >= 2
    assert str(fm.parse(fm.split((b / copy).read_text(), copy).fm_text)[MERGE_OF]) == made["id"]
    text = told(second, capsys)
    assert "merged 1 file by kenomem's rules" in text and db in text
    assert "kept 1 copy for review: the other side's version" in text and copy in text
    assert REVIEW_COMMAND in text and "pushed" in text

    third = synced(a, env)  # a learns its text was set aside, and where
    assert third["review_pulled"] == [copy] and third["review"] == [] and third["merged"] == []
    assert db in third["pulled"] and copy in third["pulled"]
    assert third["review_command"] == REVIEW_COMMAND
    assert "postgres 16" in (a / copy).read_text() and "postgres 15.4" in (a / db).read_text()
    assert third["pushed"] is False and third["pushed_commits"] == 0
    text = told(third, capsys)
    assert "kept 1 copy for review by the other side's merge" in text and copy in text
    assert REVIEW_COMMAND in text
    assert "nothing to push: origin/main has every commit" in text and "pushed" not in text

    fourth = synced(b, env)  # nothing on either side
    assert fourth["pushed"] is False and fourth["pulled"] == [] and fourth["review_command"] == ""
    text = told(fourth, capsys)
    assert "nothing to pull" in text and "nothing to push" in text

    # Each sync left the index in step with the files it merged: `sync && doctor` is 0.
    for root in (a, b):
        assert indexed_as_files(root), root
        done = kenomem(root, env, "doctor", "--json", check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        report = json.loads(done.stdout)
        assert report["findings"] == [] and report["healthy"] is True


def test_a_merge_with_several_bases_names_what_the_driver_merged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A criss-cross history: each side merged the other's first commit by hand, so the
    # sync's merge has two bases and git runs kenomem's driver itself, file by file.
    _, a, b, env = two_machines(tmp_path)
    said = kenomem(a, env, "remember", "The staging database is postgres 15", "--json")
    db = json.loads(said.stdout)["path"]
    kenomem(a, env, "sync")
    kenomem(b, env, "sync")

    def touched(root: Path, message: str, times: int = 1) -> None:  # recalls, committed
        for _ in range(times):
            kenomem(root, env, "recall", "staging database")
        git(root, env, "commit", "-qam", message)

    touched(a, "a1")
    touched(b, "b1")
    git(b, env, "branch", "b1")
    git(b, env, "fetch", "-q", str(a), "main:refs/remotes/peer/main")
    git(b, env, "merge", "-q", "--no-edit", "refs/remotes/peer/main")
    git(a, env, "fetch", "-q", str(b), "b1:refs/remotes/peer/b1")
    git(a, env, "merge", "-q", "--no-edit", "refs/remotes/peer/b1")
    touched(a, "a2", times=2)  # the two sides differ: git hands the file to the driver
    touched(b, "b2")
    git(a, env, "push", "-q", "origin", "main")
    doc = synced(b, env)
    assert len(git(b, env, "merge-base", "--all", "HEAD^1", "HEAD^2").split()) == 2
    assert doc["merged"] == [db] and doc["review"] == [] and db in doc["pulled"]
