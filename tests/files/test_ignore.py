"""The vault's `.gitignore`: files it excludes are not memories, and a change of its rules
is seen by the next command (issue 3)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kenomem.vault.core import CoreVault
from tests.conftest import Cli, CliResult, write

SECRET_ID = "mem_20260101_090000_5ec7"
SECRET = f"""---
id: {SECRET_ID}
title: Walrus
---

The walrus hides in the private folder.
"""
KETTLE = "---\nid: mem_20260101_090000_4e77\n---\n# Kettle\n\nThe kettle is descaled monthly.\n"
BROKEN = "---\ntitle: Broken\ntags: [one, two\n---\n\nThe walrus is broken.\n"

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def one_json(result: CliResult) -> Any:
    assert result.code == 0, result.err
    return json.loads(result.out)


def recalled(cli: Cli, query: str) -> tuple[list[str], str]:
    """(paths recall returns, its stderr)."""
    result = cli("recall", "--json", "--no-touch", "--limit", "50", query)
    return [r["path"] for r in one_json(result)["results"]], result.err


def indexed_paths(vault_dir: Path) -> set[str]:
    vault = CoreVault.open(vault_dir)
    vault.sync()
    return set(vault.ids().values())


def set_rules(vault_dir: Path, *lines: str) -> None:
    (vault_dir / ".gitignore").write_text("".join(f"{line}\n" for line in lines), "utf-8")


def add_rules(vault_dir: Path, *lines: str) -> None:
    with open(vault_dir / ".gitignore", "a", encoding="utf-8") as handle:
        handle.write("".join(f"{line}\n" for line in lines))


@pytest.fixture
def private(vault_dir: Path) -> Path:
    """A memory in semantic/private/ and an ordinary one beside it."""
    write(vault_dir, "semantic/kettle.md", KETTLE)
    return write(vault_dir, "semantic/private/walrus.md", SECRET)


def test_ignored_file_is_not_indexed_nor_reported(cli: Cli, vault_dir: Path, private: Path) -> None:
    add_rules(vault_dir, "semantic/private/")
    write(vault_dir, "semantic/private/broken.md", BROKEN)
    write(vault_dir, "semantic/private/hand.md", "# Hand\n\nA walrus by hand.\n")
    (vault_dir / "semantic/private/blob.md").write_bytes(b"\x00\x01 walrus")
    before = {p: p.read_bytes() for p in (vault_dir / "semantic/private").iterdir()}

    paths, err = recalled(cli, "walrus")
    assert paths == []
    assert "private" not in err
    assert recalled(cli, "kettle")[0] == ["semantic/kettle.md"]
    assert cli("show", SECRET_ID).code == 1
    listed = one_json(cli("list", "--json"))
    assert [m["path"] for m in listed["memories"]] == ["semantic/kettle.md"]
    stats = cli("stats", "--json")
    assert one_json(stats)["unreadable"] == {}
    assert "private" not in stats.err

    doc = one_json(cli("doctor", "--json", "--fix"))
    assert not [f for f in doc["findings"] if "private" in f["path"]]
    assert not [action for action in doc["fixed"] if "private" in action]
    assert {p: p.read_bytes() for p in (vault_dir / "semantic/private").iterdir()} == before


def test_unignoring_indexes_the_file_and_ignoring_again_removes_it(
    cli: Cli, vault_dir: Path, private: Path
) -> None:
    add_rules(vault_dir, "semantic/private/")
    assert recalled(cli, "walrus")[0] == []

    set_rules(vault_dir, ".kenomem/")
    assert recalled(cli, "walrus")[0] == ["semantic/private/walrus.md"]
    assert one_json(cli("show", "--json", SECRET_ID))["path"] == "semantic/private/walrus.md"

    add_rules(vault_dir, "semantic/private/")
    assert recalled(cli, "walrus")[0] == []
    assert cli("show", SECRET_ID).code == 1
    assert recalled(cli, "kettle")[0] == ["semantic/kettle.md"]
    assert private.read_text(encoding="utf-8") == SECRET


def test_a_change_of_rules_rebuilds_the_index(vault_dir: Path, private: Path) -> None:
    CoreVault.open(vault_dir).sync()
    assert not CoreVault.open(vault_dir).sync().rebuilt

    add_rules(vault_dir, "semantic/private/")
    report = CoreVault.open(vault_dir).sync()
    assert report.rebuilt
    assert "semantic/private/walrus.md" not in report.errors
    assert not CoreVault.open(vault_dir).sync().rebuilt

    # A comment is not a rule: nothing to re-evaluate.
    add_rules(vault_dir, "# private notes stay out of git")
    assert not CoreVault.open(vault_dir).sync().rebuilt
    assert indexed_paths(vault_dir) == {"semantic/kettle.md"}


def test_hand_made_file_keeps_its_id_through_ignore_and_unignore(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, "procedural/hand.md", "# Hand\n\nThe heron fishes at dawn.\n")
    (before,) = one_json(cli("recall", "--json", "--no-touch", "heron"))["results"]
    add_rules(vault_dir, "hand.md")
    assert recalled(cli, "heron")[0] == []
    set_rules(vault_dir, ".kenomem/")
    (after,) = one_json(cli("recall", "--json", "--no-touch", "heron"))["results"]
    assert after["id"] == before["id"]
    assert (vault_dir / "procedural/hand.md").read_text("utf-8") == (
        "# Hand\n\nThe heron fishes at dawn.\n"
    )


def test_negation_patterns(vault_dir: Path) -> None:
    set_rules(vault_dir, ".kenomem/", "*.draft.md", "!keep.draft.md", "episodic/", "!episodic/")
    for rel in (
        "semantic/a.draft.md",
        "procedural/deep/b.draft.md",
        "semantic/keep.draft.md",
        "procedural/deep/keep.draft.md",
        "semantic/plain.md",
        "episodic/day.md",
    ):
        write(vault_dir, rel, f"# {rel}\n\nword\n")
    assert indexed_paths(vault_dir) == {
        "semantic/keep.draft.md",
        "procedural/deep/keep.draft.md",
        "semantic/plain.md",
        "episodic/day.md",
    }


def test_the_templates_rule_ignores_only_the_derived_state(cli: Cli, vault_dir: Path) -> None:
    assert (vault_dir / ".gitignore").read_text("utf-8").count(".kenomem/") == 1
    files = ["semantic/kettle.md", "semantic/kenomem/notes.md", "working/kenomem.md"]
    for rel in files:
        write(vault_dir, rel, f"# {rel}\n\nThe kettle.\n")
    paths, err = recalled(cli, "kettle")
    assert sorted(paths) == sorted(files)
    assert err == ""
    assert not CoreVault.open(vault_dir).sync().rebuilt


@needs_git
def test_the_templates_rule_keeps_the_derived_state_out_of_git(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, "semantic/kettle.md", KETTLE)
    assert recalled(cli, "kettle")[0] == ["semantic/kettle.md"]
    assert (vault_dir / ".kenomem").is_dir()
    subprocess.run(["git", "init", "-q", str(vault_dir)], check=True)
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=vault_dir,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "semantic/kettle.md" in status
    assert ".kenomem" not in status


def test_no_gitignore_at_all(cli: Cli, vault_dir: Path, private: Path) -> None:
    (vault_dir / ".gitignore").unlink()
    paths, err = recalled(cli, "walrus")
    assert paths == ["semantic/private/walrus.md"]
    assert err == ""
    assert recalled(cli, "kettle")[0] == ["semantic/kettle.md"]
    assert one_json(cli("doctor", "--json"))["findings"] == []


def test_removing_the_gitignore_brings_ignored_files_back(
    cli: Cli, vault_dir: Path, private: Path
) -> None:
    add_rules(vault_dir, "semantic/private/")
    assert recalled(cli, "walrus")[0] == []
    (vault_dir / ".gitignore").unlink()
    assert recalled(cli, "walrus")[0] == ["semantic/private/walrus.md"]


# -- the same answer as git ----------------------------------------------------------------

FILES = (
    "semantic/plain.md",
    "semantic/a.draft.md",
    "semantic/keep.draft.md",
    "episodic/2025-01.md",
    "episodic/sub/2025-02.md",
    "semantic/tmp/t.md",
    "procedural/old.md",
    "procedural/a/b/old.md",
    "semantic/#hash.md",
    "semantic/spaced.md",
    "working/session.md",
    "archive/semantic/gone.md",
)


def git_ignored(vault_dir: Path, paths: list[str]) -> set[str]:
    subprocess.run(["git", "init", "-q", str(vault_dir)], check=True)
    result = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"],
        cwd=vault_dir,
        input="\n".join(paths) + "\n",
        capture_output=True,
        text=True,
    )
    assert result.returncode in (0, 1), result.stderr
    return set(result.stdout.split("\n")) - {""}


@needs_git
@pytest.mark.parametrize(
    "rules",
    [
        (".kenomem/", "*.draft.md", "!keep.draft.md"),
        ("/episodic/2025-*", "**/tmp/", "procedural/**/old.md"),
        ("\\#hash.md", "spaced.md   ", "working"),
        ("archive/", "*.md", "!semantic/*.md"),
    ],
    ids=["negation", "anchors-and-globstars", "escapes-and-spaces", "folders"],
)
def test_the_same_files_are_ignored_as_git_ignores(vault_dir: Path, rules: tuple[str, ...]) -> None:
    set_rules(vault_dir, *rules)
    for rel in FILES:
        write(vault_dir, rel, f"# {rel}\n\nword\n")
    ignored = git_ignored(vault_dir, list(FILES))
    assert ignored  # each set of rules excludes something
    assert indexed_paths(vault_dir) == set(FILES) - ignored


@needs_git
def test_a_file_in_an_excluded_folder_cannot_be_re_included(vault_dir: Path) -> None:
    # git: "It is not possible to re-include a file if a parent directory of that file is
    # excluded." A file git ignores is not a memory either.
    set_rules(vault_dir, "semantic/private/", "!semantic/private/keep.md")
    write(vault_dir, "semantic/private/keep.md", "# Keep\n\nword\n")
    write(vault_dir, "semantic/private/other.md", "# Other\n\nword\n")
    write(vault_dir, "semantic/plain.md", "# Plain\n\nword\n")
    assert git_ignored(vault_dir, ["semantic/private/keep.md"]) == {"semantic/private/keep.md"}
    assert indexed_paths(vault_dir) == {"semantic/plain.md"}
