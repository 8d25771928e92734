"""The driver as git runs it: three files in, the result in ours, copies beside."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenomem.errors import UnsafePath
from kenomem.share.driver import run_driver
from kenomem.share.merge import REVIEW_TAG

BASE = "---\nid: mem_1\ntitle: Deploy\naccess_count: 1\n---\nDeploys run on Fridays.\n"


def sides(tmp_path: Path, ours_body: str, theirs_body: str) -> tuple[Path, Path, Path]:
    files = []
    for name, text in (
        ("base", BASE),
        ("ours", BASE.replace("access_count: 1", "access_count: 2").replace("Fridays", ours_body)),
        (
            "theirs",
            BASE.replace("access_count: 1", "access_count: 4").replace("Fridays", theirs_body),
        ),
    ):
        path = tmp_path / f".merge_file_{name}"
        path.write_text(text, encoding="utf-8")
        files.append(path)
    return files[0], files[1], files[2]


def test_the_result_goes_to_ours_and_theirs_beside_the_file(tmp_path: Path) -> None:
    top = tmp_path / "vault"
    (top / "semantic").mkdir(parents=True)
    base, ours, theirs = sides(tmp_path, "Thursdays", "Mondays")
    result = run_driver(base, ours, theirs, "semantic/deploy.md", top)
    assert "access_count: 5" in ours.read_text() and "Thursdays" in ours.read_text()
    (copy,) = (top / "semantic").iterdir()
    assert copy.name == "deploy-merged.md"
    assert "Mondays" in copy.read_text() and REVIEW_TAG in copy.read_text()
    assert result.notes
    # The same merge again (a merge that was stopped, done again): no second copy.
    base, ours, theirs = sides(tmp_path, "Thursdays", "Mondays")
    run_driver(base, ours, theirs, "semantic/deploy.md", top)
    assert [p.name for p in (top / "semantic").iterdir()] == ["deploy-merged.md"]
    base, ours, theirs = sides(tmp_path, "Thursdays", "Sundays")  # another copy: a new name
    run_driver(base, ours, theirs, "semantic/deploy.md", top)
    assert sorted(p.name for p in (top / "semantic").iterdir()) == [
        "deploy-merged-2.md",
        "deploy-merged.md",
    ]


def test_a_copy_is_never_written_through_a_folder_that_leads_out(tmp_path: Path) -> None:
    top, elsewhere = tmp_path / "vault", tmp_path / "elsewhere"
    top.mkdir()
    elsewhere.mkdir()
    (top / "semantic").symlink_to(elsewhere)
    base, ours, theirs = sides(tmp_path, "Thursdays", "Mondays")
    with pytest.raises(UnsafePath):
        run_driver(base, ours, theirs, "semantic/deploy.md", top)
    assert list(elsewhere.iterdir()) == []
