"""`reset`: start over with a way back. What it removes waits in the trash, `archive/.reset/`,
`--undo` brings it back byte for byte, and a reset killed half-way is finished by the next
one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from kenomem.forget import reset as resets
from kenomem.forget.prune import PruneRequest, prune
from kenomem.forget.reset import ResetRequest
from kenomem.vault.core import CoreVault
from tests.conftest import Cli, CliResult, write
from tests.forget.helpers import (
    KENOMEM,
    NOW,
    TRASH,
    file_ids,
    on_terminal,
    outside_state,
    put,
    settings_file,
)

RESET_KEYS = {"action", "scope", "files", "trash", "conflicts", "emptied"}
SEMANTIC = ["semantic/lighthouse.md", "semantic/people/ana.md", "archive/semantic/old-boat.md"]
MEMORY = [
    "episodic/2026-02/ferry.md",
    "episodic/kites.md",
    "working/s1.md",
    "procedural/greeting.md",
    "buffer/2026-03-01.md",
    "archive/episodic/storm.md",
    "archive/working/s0.md",
    "archive/procedural/old-habit.md",
]
KEEP_ALWAYS = ["kenomem.toml", "README.md", ".gitignore"]
GITKEEPS = [f"{d}/.gitkeep" for d in ("semantic", "episodic", "procedural", "working", "buffer")]


@pytest.fixture
def full(vault_dir: Path) -> Path:
    """Something in every folder, hand-made notes and settings included."""
    settings_file(vault_dir, "[reset]\ntrash_days = 30.0\n")
    for n, rel in enumerate(SEMANTIC + MEMORY):
        if rel.startswith("buffer/"):
            write(
                vault_dir,
                rel,
                "---\ndate: 2026-03-01\nconsolidated: null\n---\n\n"
                "## 14:30 cli Ana\n\nThe harbour opens at nine.\n",
            )
        elif rel == "episodic/kites.md":
            write(vault_dir, rel, "# Kites\n\nFlew harbour kites, no frontmatter.\n")
        else:
            put(
                vault_dir,
                rel,
                f"mem_20260101_0000{n:02d}_abcd",
                age=10 + n,
                tags=("harbour",),
                title=f"Harbour note {n}",
            )
    return vault_dir


def one_json(result: CliResult) -> Any:
    assert result.code == 0, result.err
    return json.loads(result.out)


def trashed(root: Path) -> dict[str, bytes]:
    """What the trash holds, by vault path, whatever the reset's folder (manifest aside)."""
    found: dict[str, bytes] = {}
    for folder in sorted(p for p in root.joinpath(*TRASH).glob("*") if p.is_dir()):
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder).as_posix()
            if path.is_file() and rel not in (resets.MANIFEST, resets.DONE):
                assert rel not in found, f"{rel} twice in the trash"
                found[rel] = path.read_bytes()
    return found


def everything(root: Path) -> dict[str, bytes]:
    """The vault and the trash together: each file once, wherever it is."""
    here, bin_ = outside_state(root), trashed(root)
    assert not set(here) & set(bin_), set(here) & set(bin_)
    return {**here, **bin_}


def listed(cli: Cli) -> set[str]:
    return {m["path"] for m in one_json(cli("list", "--json", "--limit", "100"))["memories"]}


def test_reset_memory_keeps_semantic_memory_and_the_foundation(cli: Cli, full: Path) -> None:
    before = outside_state(full)
    doc = one_json(cli("reset", "--memory", "--yes", "--json"))
    assert set(doc) == RESET_KEYS
    assert (doc["action"], doc["scope"], doc["files"]) == ("reset", "memory", len(MEMORY))
    assert (doc["conflicts"], doc["emptied"]) == ([], 0)
    assert doc["trash"].startswith("archive/.reset/")
    after = outside_state(full)
    for rel in [*SEMANTIC, "foundation.md", *KEEP_ALWAYS, *GITKEEPS]:
        assert after[rel] == before[rel], rel
    assert set(after) == set(before) - set(MEMORY)
    assert trashed(full) == {rel: before[rel] for rel in MEMORY}
    assert {p.name for p in (full / doc["trash"]).iterdir()} >= {"manifest.txt", "done"}
    for folder in ("episodic", "working", "procedural", "buffer", "archive/episodic"):
        assert (full / folder).is_dir()
    assert listed(cli) == {"semantic/lighthouse.md", "semantic/people/ana.md"}
    found = one_json(cli("recall", "harbour", "--archive", "--json", "--no-touch"))["results"]
    assert {r["path"] for r in found} == set(SEMANTIC)


def test_reset_all_keeps_only_the_settings(cli: Cli, full: Path) -> None:
    before = outside_state(full)
    doc = one_json(cli("reset", "--all", "--yes", "--json"))
    assert (doc["scope"], doc["files"]) == ("all", len(SEMANTIC) + len(MEMORY) + 1)
    after = outside_state(full)
    assert set(after) == {*KEEP_ALWAYS, *GITKEEPS, "archive/.gitkeep"}
    assert all(after[rel] == before[rel] for rel in after)
    assert trashed(full) == {r: before[r] for r in [*SEMANTIC, *MEMORY, "foundation.md"]}
    assert listed(cli) == set()
    assert one_json(cli("recall", "harbour", "--archive", "--json"))["results"] == []


@pytest.mark.parametrize("scope", ["--memory", "--all"])
def test_reset_refuses_without_yes_and_without_a_terminal(cli: Cli, full: Path, scope: str) -> None:
    before = outside_state(full)
    result = cli("reset", scope, input="y\n")
    assert result.code == 1 and result.out == "", result
    assert "--yes" in result.err and "Traceback" not in result.err
    assert outside_state(full) == before
    assert not full.joinpath(*TRASH).exists()


@pytest.mark.parametrize(
    "flags",
    [
        [],
        ["--memory", "--all"],
        ["--memory", "--undo"],
        ["--all", "--undo"],
        ["--memory", "--all", "--undo"],
    ],
)
def test_reset_takes_exactly_one_of_memory_all_undo(cli: Cli, full: Path, flags: list[str]) -> None:
    before = outside_state(full)
    result = cli("reset", *flags, "--yes")
    assert result.code == 2, result
    assert "Traceback" not in result.err and result.out == ""
    assert outside_state(full) == before
    assert not full.joinpath(*TRASH).exists()


@pytest.mark.parametrize("answer", ["y", "n"])
def test_reset_asks_on_a_terminal(full: Path, answer: str) -> None:
    before = outside_state(full)
    code, out, shown = on_terminal(full, ["reset", "--memory", "--json"], answer)
    assert "[y/N]" in shown and "--undo" in shown
    if answer == "y":
        assert code == 0, shown
        assert json.loads(out)["files"] == len(MEMORY)
        assert trashed(full) == {rel: before[rel] for rel in MEMORY}
    else:
        assert code == 1, shown
        assert outside_state(full) == before
        assert trashed(full) == {}


# -- undo ---------------------------------------------------------------------------------


@pytest.mark.parametrize("scope", ["--memory", "--all"])
def test_undo_brings_everything_back_byte_for_byte(cli: Cli, full: Path, scope: str) -> None:
    before = outside_state(full)
    paths_before = listed(cli)
    done = one_json(cli("reset", scope, "--yes", "--json"))
    doc = one_json(cli("reset", "--undo", "--json"))
    assert set(doc) == RESET_KEYS
    assert (doc["action"], doc["scope"], doc["files"]) == ("undo", scope[2:], done["files"])
    assert (doc["trash"], doc["conflicts"]) == (done["trash"], [])
    assert outside_state(full) == before
    assert not (full / done["trash"]).exists()
    assert listed(cli) == paths_before
    found = one_json(cli("recall", "kites", "--json", "--no-touch"))["results"]
    assert [r["path"] for r in found] == ["episodic/kites.md"]


def test_undo_never_overwrites_a_file_that_appeared_meanwhile(cli: Cli, full: Path) -> None:
    before = outside_state(full)
    cli("reset", "--memory", "--yes")
    newer = write(full, "episodic/kites.md", "# Kites\n\nA new note about kites.\n")
    doc = one_json(cli("reset", "--undo", "--json"))
    assert doc["conflicts"] == ["episodic/kites.md"]
    assert doc["files"] == len(MEMORY) - 1
    assert newer.read_text("utf-8") == "# Kites\n\nA new note about kites.\n"
    assert trashed(full) == {"episodic/kites.md": before["episodic/kites.md"]}
    assert one_json(cli("recall", "kites", "--json", "--no-touch"))["results"][0]["path"] == (
        "episodic/kites.md"
    )
    newer.unlink()
    again = one_json(cli("reset", "--undo", "--json"))
    assert (again["files"], again["conflicts"]) == (1, [])
    assert outside_state(full) == before


def test_undo_takes_back_the_last_reset_first(cli: Cli, full: Path) -> None:
    before = outside_state(full)
    first = one_json(cli("reset", "--memory", "--yes", "--json"))
    later = write(full, "episodic/new.md", "# New\n\nWritten after the first reset.\n")
    with_new = outside_state(full)
    second = one_json(cli("reset", "--all", "--yes", "--json"))
    assert second["trash"] != first["trash"]
    assert one_json(cli("reset", "--undo", "--json"))["trash"] == second["trash"]
    assert outside_state(full) == with_new
    later.unlink()
    assert one_json(cli("reset", "--undo", "--json"))["trash"] == first["trash"]
    assert outside_state(full) == before


def test_undo_without_a_reset_is_an_error(cli: Cli, full: Path) -> None:
    before = outside_state(full)
    result = cli("reset", "--undo")
    assert result.code == 1 and "Traceback" not in result.err
    assert "no reset" in result.err
    assert outside_state(full) == before


# -- the trash empties itself -------------------------------------------------------------


def age_trash(root: Path, days: float) -> Path:
    (folder,) = (p for p in root.joinpath(*TRASH).iterdir() if p.is_dir())
    stamp = time.time() - days * 86400
    os.utime(folder / resets.DONE, (stamp, stamp))
    return folder


@pytest.mark.parametrize(("trash_days", "age", "emptied"), [(30, 29, 0), (30, 31, 1), (2, 3, 1)])
def test_old_trash_is_emptied_by_the_next_reset(
    cli: Cli, full: Path, trash_days: float, age: float, emptied: int
) -> None:
    settings_file(full, f"[reset]\ntrash_days = {trash_days}\n")
    cli("reset", "--memory", "--yes")
    old = age_trash(full, age)
    doc = one_json(cli("reset", "--all", "--yes", "--json"))
    assert doc["emptied"] == emptied
    assert old.exists() is (not emptied)
    assert (full / doc["trash"]).is_dir()


@pytest.mark.parametrize(("age", "emptied"), [(29, 0), (31, 1)])
def test_old_trash_is_emptied_by_the_next_prune(
    cli: Cli, full: Path, age: float, emptied: int
) -> None:
    cli("reset", "--memory", "--yes")
    old = age_trash(full, age)
    assert one_json(cli("prune", "--json"))["trash_emptied"] == emptied
    assert old.exists() is (not emptied)
    assert one_json(cli("prune", "--dry-run", "--json"))["trash_emptied"] == 0


# -- interrupted --------------------------------------------------------------------------


class Crash(Exception):
    pass


def crash_after(monkeypatch: pytest.MonkeyPatch, calls: int) -> None:
    real, seen = os.rename, [0]

    def rename(source: Any, dest: Any, **folders: Any) -> None:
        # By name in a folder held by descriptor, as `paths.move_inside` renames.
        held = folders.get("dst_dir_fd")
        where = f"{os.readlink(f'/proc/self/fd/{held}')}/{dest}" if held is not None else dest
        if "/.reset/" in str(where):
            seen[0] += 1
            if seen[0] == calls:
                raise Crash(where)
        real(source, dest, **folders)

    monkeypatch.setattr(os, "rename", rename)


@pytest.mark.parametrize("calls", [1, 4, len(MEMORY)])
def test_an_interrupted_reset_is_finished_by_the_next(
    full: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, calls: int
) -> None:
    before = outside_state(full)
    copy = tmp_path / "copy"
    shutil.copytree(full, copy)
    resets.reset(CoreVault.open(copy), ResetRequest(everything=False), now=NOW)
    with monkeypatch.context() as patch:
        crash_after(patch, calls)
        with pytest.raises(Crash):
            resets.reset(CoreVault.open(full), ResetRequest(everything=False), now=NOW)
    assert everything(full) == before
    assert len(trashed(full)) == calls - 1
    result = resets.reset(CoreVault.open(full), ResetRequest(everything=False), now=NOW)
    assert result.files == len(MEMORY) - (calls - 1)
    assert outside_state(full) == outside_state(copy)
    assert trashed(full) == trashed(copy)
    undone = resets.undo(CoreVault.open(full))
    assert undone.files == len(MEMORY) and undone.conflicts == []
    assert outside_state(full) == before


def test_an_interrupted_reset_all_is_not_finished_as_a_memory_reset(
    cli: Cli, full: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`reset --memory` must keep semantic memory and the foundation, whatever came before."""
    before = outside_state(full)
    with monkeypatch.context() as patch:
        crash_after(patch, 2)
        with pytest.raises(Crash):
            resets.reset(CoreVault.open(full), ResetRequest(everything=True), now=NOW)
    result = cli("reset", "--memory", "--yes", "--json")
    assert everything(full) == before
    if result.code == 0:
        assert json.loads(result.out)["scope"] == "memory"
        for rel in [*SEMANTIC, "foundation.md"]:
            assert (full / rel).is_file(), f"reset --memory removed {rel}"
    else:
        assert result.code == 1 and "Traceback" not in result.err


KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path

    from kenomem.forget import reset
    from kenomem.vault.core import CoreVault

    root, calls = Path(sys.argv[1]), int(sys.argv[2])
    real, seen = os.rename, [0]

    def rename(source, dest, **folders):
        held = folders.get("dst_dir_fd")
        where = f"{os.readlink(f'/proc/self/fd/{held}')}/{dest}" if held is not None else dest
        if "/.reset/" in str(where):
            seen[0] += 1
            if seen[0] == calls:
                os.kill(os.getpid(), signal.SIGKILL)
        real(source, dest, **folders)

    os.rename = rename
    reset.reset(CoreVault.open(root), reset.ResetRequest(everything=False))
    print("not killed")
    """
)


def run(*args: str, vault: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KENOMEM_VAULT": str(vault), "NO_COLOR": "1"}
    return subprocess.run(
        list(args), env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("calls", [1, 5])
def test_a_killed_reset_process_is_finished_then_undone(
    full: Path, tmp_path: Path, calls: int
) -> None:
    before = outside_state(full)
    script = tmp_path / "killer.py"
    script.write_text(KILLER, encoding="utf-8")
    killed = run(sys.executable, str(script), str(full), str(calls), vault=full)
    assert killed.returncode == -9, (killed.stdout, killed.stderr)
    assert everything(full) == before
    assert len(trashed(full)) == calls - 1

    finished = run(KENOMEM, "reset", "--memory", "--yes", "--json", vault=full)
    assert finished.returncode == 0, finished.stderr
    assert json.loads(finished.stdout)["files"] == len(MEMORY) - (calls - 1)
    assert trashed(full) == {rel: before[rel] for rel in MEMORY}
    assert set(outside_state(full)) == set(before) - set(MEMORY)
    ids = file_ids(full)  # the vault and the trash: the buffer day and kites.md have none
    assert len(ids) == len(set(ids)) == len(SEMANTIC) + len(MEMORY) - 2

    undone = run(KENOMEM, "reset", "--undo", "--json", vault=full)
    assert undone.returncode == 0, undone.stderr
    assert json.loads(undone.stdout)["files"] == len(MEMORY)
    assert outside_state(full) == before
    assert trashed(full) == {}


def test_reset_then_prune_on_an_emptied_vault(full: Path) -> None:
    resets.reset(CoreVault.open(full), ResetRequest(everything=True), now=NOW)
    result = prune(CoreVault.open(full), PruneRequest(), now=NOW)
    assert (result.plan.active, result.archived) == (0, 0)


# -- only memory files, only in a vault, never through a symlink --------------------------


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink() and ".kenomem" not in p.relative_to(folder).parts
    }


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """Someone's folder outside the vault: a thesis, a photo, markdown notes."""
    folder = tmp_path / "elsewhere"
    (folder / "sub").mkdir(parents=True)
    (folder / "thesis.docx").write_bytes(b"PK\x03\x04 chapter one")
    (folder / "sub" / "photo.jpg").write_bytes(b"\xff\xd8\xff a photo")
    (folder / "plan.md").write_text("# Plan\n\nMy own plan.\n", encoding="utf-8")
    (folder / "sub" / "notes.md").write_text("# Notes\n\nMine too.\n", encoding="utf-8")
    return folder


def test_reset_and_prune_never_follow_a_symlink_out_of_the_vault(
    cli: Cli, full: Path, elsewhere: Path
) -> None:
    shutil.rmtree(full / "working")
    (full / "working").symlink_to(elsewhere, target_is_directory=True)
    link = full / "semantic" / "plan.md"
    link.symlink_to(elsewhere / "plan.md")
    before = files_of(elsewhere)
    doc = one_json(cli("reset", "--all", "--yes", "--json"))
    assert doc["files"] == len(SEMANTIC) + len(MEMORY)  # working/s1.md went with the folder
    assert files_of(elsewhere) == before
    assert (full / "working").is_symlink() and link.is_symlink()
    assert not any(rel.startswith("working/") or rel == "semantic/plan.md" for rel in trashed(full))
    age_trash(full, 400)
    assert one_json(cli("prune", "--json"))["trash_emptied"] == 1
    assert files_of(elsewhere) == before


def test_reset_moves_only_memory_files(cli: Cli, full: Path) -> None:
    others = {
        "semantic/diagram.png": b"\x89PNG a diagram",
        "archive/taxes/2024.pdf": b"%PDF taxes",
        "semantic/private/diary.md": b"# Diary\n\nIgnored by git.\n",
        "semantic/.obsidian/workspace.md": b"# an editor's file\n",
        "buffer/notes.md": b"# not a buffer day\n",
    }
    for rel, data in others.items():
        (full / rel).parent.mkdir(parents=True, exist_ok=True)
        (full / rel).write_bytes(data)
    with (full / ".gitignore").open("a", encoding="utf-8") as rules:
        rules.write("semantic/private/\n")
    before = outside_state(full)
    doc = one_json(cli("reset", "--all", "--yes", "--json"))
    assert doc["files"] == len(SEMANTIC) + len(MEMORY) + 1
    after = outside_state(full)
    assert {rel: after.get(rel) for rel in others} == others
    assert set(trashed(full)) == {*SEMANTIC, *MEMORY, "foundation.md"}
    one_json(cli("reset", "--undo", "--json"))
    assert outside_state(full) == before


@pytest.mark.parametrize("command", [["reset", "--all", "--yes"], ["prune"]])
def test_reset_and_prune_refuse_a_folder_that_is_not_a_vault(
    cli: Cli, tmp_path: Path, command: list[str]
) -> None:
    home = tmp_path / "home-folder"
    for rel in ("archive/2019/invoice.pdf", "semantic/notes.md", "working/draft.md"):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_bytes(b"someone's " + rel.encode())
    before = files_of(home)
    result = cli(*command, "--vault", str(home))
    assert result.code == 1 and "Traceback" not in result.err
    assert "not a kenomem vault" in result.err and f"kenomem init {home}" in result.err
    assert files_of(home) == before


def test_undo_never_moves_into_a_folder_that_now_leads_out(
    cli: Cli, full: Path, elsewhere: Path
) -> None:
    one_json(cli("reset", "--memory", "--yes", "--json"))
    shutil.rmtree(full / "working")
    (full / "working").symlink_to(elsewhere, target_is_directory=True)
    before = files_of(elsewhere)
    doc = one_json(cli("reset", "--undo", "--json"))
    assert doc["conflicts"] == ["working/s1.md"]
    assert files_of(elsewhere) == before
    assert set(trashed(full)) == {"working/s1.md"}


def test_emptying_the_trash_removes_only_what_a_reset_put_there(
    cli: Cli, full: Path, elsewhere: Path
) -> None:
    one_json(cli("reset", "--memory", "--yes", "--json"))
    made = age_trash(full, 400)
    trash = made.parent
    (made / "a-note-of-mine.txt").write_text("not kenomem's\n", encoding="utf-8")
    (made / "procedural" / "mine.md").write_text("# mine\n", encoding="utf-8")
    shutil.rmtree(made / "working")  # a folder it lists, now a symlink out of the trash
    (made / "working").symlink_to(elsewhere / "sub", target_is_directory=True)
    (elsewhere / "sub" / "s1.md").write_text("# not in the trash\n", encoding="utf-8")
    foreign = trash / "20200101T000000"  # no manifest: not a reset's
    foreign.mkdir()
    (foreign / "done").write_text("2020-01-01\n", encoding="utf-8")
    (foreign / "kept.md").write_text("# kept\n", encoding="utf-8")
    stamp = time.time() - 400 * 86400
    os.utime(foreign / "done", (stamp, stamp))
    before = files_of(elsewhere)

    assert one_json(cli("prune", "--json"))["trash_emptied"] == 1
    assert files_of(elsewhere) == before
    assert files_of(foreign) == {"done": b"2020-01-01\n", "kept.md": b"# kept\n"}
    left = files_of(made)
    assert left == {"a-note-of-mine.txt": b"not kenomem's\n", "procedural/mine.md": b"# mine\n"}
    assert (made / "working").is_symlink()
