"""The trash of `reset` lives in the vault, `archive/.reset/`: `.kenomem/` may be deleted
at any time and `reset --undo` still brings everything back. The trash is never indexed,
watched, reported by `doctor` or shared by `sync` (nor by a `git add` made by hand); it is
held by descriptor, so a link planted at it or in it is never followed; a manifest moves
only memory files; and a trash an older version left in `.kenomem/trash/` is taken over."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from kenomem.files.ignore import matcher
from kenomem.forget import reset as resets
from kenomem.forget.reset import resettable
from kenomem.share.incoming import is_own, why_refused
from kenomem.watch.plan import Event, add, relevant
from tests.adversarial.hostile import clean_exit, tree
from tests.conftest import Cli, CliResult, write
from tests.forget.helpers import TRASH, outside_state, put, settings_file

MEMORIES = ["semantic/lighthouse.md", "episodic/2026-02/ferry.md", "procedural/greeting.md"]
HAND_NOTE = "episodic/kites.md"  # a person's note: no frontmatter
DAY = "buffer/2026-03-01.md"


@pytest.fixture
def filled(vault_dir: Path) -> Path:
    settings_file(vault_dir, "[reset]\ntrash_days = 30.0\n")
    for n, rel in enumerate(MEMORIES):
        put(vault_dir, rel, f"mem_20260101_0000{n:02d}_abcd", age=5 + n, title=f"Harbour {n}")
    write(vault_dir, HAND_NOTE, "# Kites\n\nFlew harbour kites.\n")
    write(
        vault_dir,
        DAY,
        "---\ndate: 2026-03-01\nconsolidated: null\n---\n\n## 14:30 cli Ana\n\nThe harbour.\n",
    )
    return vault_dir


def ok(result: CliResult) -> Any:
    assert result.code == 0, result.err
    return json.loads(result.out)


def trash(root: Path) -> Path:
    return root.joinpath(*TRASH)


def listed(cli: Cli, *flags: str) -> set[str]:
    found = ok(cli("list", "--json", "--limit", "100", *flags))["memories"]
    return {m["path"] for m in found}


# -- .kenomem/ is disposable: the way back is not in it ------------------------------------


@pytest.mark.parametrize("scope", ["--memory", "--all"])
def test_undo_after_deleting_the_state_folder_brings_everything_back(
    cli: Cli, filled: Path, scope: str
) -> None:
    before = outside_state(filled)
    paths = listed(cli)
    done = ok(cli("reset", scope, "--yes", "--json"))
    assert done["trash"].startswith("archive/.reset/") and done["files"] >= 4
    shutil.rmtree(filled / ".kenomem")
    undone = ok(cli("reset", "--undo", "--json"))
    assert (undone["files"], undone["conflicts"]) == (done["files"], [])
    assert outside_state(filled) == before  # byte for byte
    assert not trash(filled).exists()  # nothing left behind
    assert listed(cli) == paths
    found = ok(cli("recall", "kites", "--json", "--no-touch"))["results"]
    assert [r["path"] for r in found] == [HAND_NOTE]


def test_the_trash_is_never_indexed_reported_or_watched(cli: Cli, filled: Path) -> None:
    (filled / HAND_NOTE).unlink()  # a note without an id is doctor's business, not ours
    done = ok(cli("reset", "--all", "--yes", "--json"))
    assert done["files"] == len(MEMORIES) + 2  # the buffer day and the foundation too
    held = sorted(p.relative_to(filled).as_posix() for p in trash(filled).rglob("*.md"))
    assert len(held) == len(MEMORIES) + 2
    shutil.rmtree(filled / ".kenomem")  # rebuilt from the files: the trash must stay out
    assert listed(cli) == listed(cli, "--archive") == set()
    assert ok(cli("recall", "harbour", "--archive", "--json"))["results"] == []
    doctor = cli("doctor", "--json")
    assert doctor.code == 0, doctor.out + doctor.err
    assert ".reset" not in doctor.out + doctor.err
    nothing = matcher("")
    for rel in [*held, TRASH[0] + "/" + TRASH[1], f"{done['trash']}/manifest.txt"]:
        assert not relevant(rel, rel.endswith(".reset"), nothing), rel
    moved = [Event("moved", MEMORIES[0], dest=f"{done['trash']}/{MEMORIES[0]}")]
    pending = add(None, moved, 1.0, nothing)
    assert pending is not None and pending.paths == {MEMORIES[0]}  # the file left the vault


def test_prune_empties_old_trash_in_the_vault(cli: Cli, filled: Path) -> None:
    done = ok(cli("reset", "--memory", "--yes", "--json"))
    assert done["trash"].startswith(resets.TRASH_DIR) and (filled / done["trash"]).is_dir()
    stamp = 1_000_000_000  # 2001
    os.utime(filled / done["trash"] / resets.DONE, (stamp, stamp))
    assert ok(cli("prune", "--json"))["trash_emptied"] == 1
    assert not trash(filled).exists()


def test_the_trash_keeps_itself_out_of_git(cli: Cli, filled: Path) -> None:
    ok(cli("reset", "--memory", "--yes", "--json"))
    shield = trash(filled) / resets.SHIELD
    assert shield.read_bytes() == resets.SHIELD_TEXT
    assert oct(trash(filled).stat().st_mode & 0o777) == "0o700"
    shield.unlink()
    done = ok(cli("reset", "--all", "--yes", "--json"))  # the next reset writes it again
    assert shield.read_bytes() == resets.SHIELD_TEXT
    for rel in (f"{done['trash']}/semantic/lighthouse.md", f"{done['trash']}/manifest.txt"):
        assert not is_own(rel)  # sync never commits it
        assert why_refused(rel, "100644") == "a hidden name"  # nor takes one from a remote


# -- sync never shares it -----------------------------------------------------------------


@pytest.mark.slow
def test_sync_never_commits_or_pushes_the_trash(tmp_path: Path) -> None:
    from tests.share.helpers import git, git_env, kenomem

    env = git_env(tmp_path)
    remote, vault = tmp_path / "remote.git", tmp_path / "vault"
    git(tmp_path, env, "init", "-q", "--bare", "-b", "main", str(remote))
    kenomem(vault, env, "init", str(vault), "--git")
    git(vault, env, "checkout", "-q", "-b", "main")
    git(vault, env, "remote", "add", "origin", str(remote))
    for text in ("The harbour ferry leaves at nine", "Ana keeps the harbour keys"):
        kenomem(vault, env, "remember", text)
    kenomem(vault, env, "sync")
    pushed = git(remote, env, "ls-tree", "-r", "--name-only", "main").split("\n")
    assert any(p.startswith("semantic/") for p in pushed)

    kenomem(vault, env, "reset", "--all", "--yes")
    synced = kenomem(vault, env, "sync")
    assert ".reset" not in synced.stdout + synced.stderr  # not even "left alone"
    remote_tree = git(remote, env, "ls-tree", "-r", "--name-only", "main")
    assert ".reset" not in remote_tree
    assert not [p for p in remote_tree.split("\n") if p.endswith(".md") and "/" in p]
    git(vault, env, "add", "-A")  # by hand: the trash's own .gitignore keeps it out
    assert git(vault, env, "ls-files", "--", "archive/").strip() in ("", "archive/.gitkeep")
    assert not git(vault, env, "status", "--porcelain", "--untracked-files=all", "--", "archive")

    kenomem(vault, env, "reset", "--undo")
    assert git(vault, env, "status", "--porcelain", "--", "semantic")  # back, to commit again


# -- held by descriptor: a link at the trash or in it is never followed -------------------


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A folder outside the vault, laid out like a trash with a reset of its own."""
    folder = tmp_path / "elsewhere"
    (folder / "20200101T000000" / "semantic").mkdir(parents=True)
    (folder / "20200101T000000" / "manifest.txt").write_text("scope all\nsemantic/x.md\n")
    (folder / "20200101T000000" / "semantic" / "x.md").write_text("# not the vault's\n")
    (folder / "20200101T000000" / "done").write_text("2020-01-01\n")
    return folder


@pytest.mark.parametrize("command", [["reset", "--memory", "--yes"], ["reset", "--undo"]])
def test_a_trash_that_is_a_link_is_refused(
    cli: Cli, filled: Path, elsewhere: Path, command: list[str]
) -> None:
    trash(filled).symlink_to(elsewhere, target_is_directory=True)
    before, vault = tree(elsewhere), tree(filled)
    result = cli(*command)
    clean_exit(result.code, result.out, result.err)
    assert result.code == 1 and "is not a folder of the trash's own" in result.err, result.err
    assert "mv " in result.err  # the way out
    assert tree(elsewhere) == before
    assert tree(filled) == vault  # nothing moved
    emptied = cli("prune", "--json")  # nothing of a reset's to empty there
    assert ok(emptied)["trash_emptied"] == 0
    assert tree(elsewhere) == before


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give away a folder"
)
def test_a_trash_of_another_user_is_refused(cli: Cli, filled: Path) -> None:
    trash(filled).mkdir(mode=0o700)
    os.chown(trash(filled), 54321, 54321)
    before = tree(filled)
    result = cli("reset", "--memory", "--yes")
    clean_exit(result.code, result.out, result.err)
    assert result.code == 1 and "belongs to another user (uid 54321)" in result.err, result.err
    assert tree(filled) == before


def test_links_in_the_trash_are_never_followed(cli: Cli, filled: Path, elsewhere: Path) -> None:
    before = outside_state(filled)
    done = ok(cli("reset", "--memory", "--yes", "--json"))
    made = filled / done["trash"]
    # A reset folder that is a link: not one of the trash's (undo takes the one before).
    (trash(filled) / "29990101T000000").symlink_to(elsewhere / "20200101T000000")
    # A folder of the reset that became a link out: what is behind it is not moved in.
    shutil.rmtree(made / "procedural")
    (made / "procedural").symlink_to(elsewhere / "20200101T000000" / "semantic")
    outside = tree(elsewhere)
    undone = ok(cli("reset", "--undo", "--json"))
    assert undone["trash"] == done["trash"] and undone["conflicts"] == []
    assert tree(elsewhere) == outside
    assert not (filled / "procedural" / "x.md").exists()
    assert outside_state(filled) == {
        rel: data for rel, data in before.items() if rel != "procedural/greeting.md"
    }


def test_a_done_marker_that_is_a_link_is_replaced_not_written_through(
    cli: Cli, filled: Path, elsewhere: Path
) -> None:
    target = elsewhere / "20200101T000000" / "done"
    unfinished = trash(filled) / "20200101T000000"
    unfinished.mkdir(parents=True)
    (unfinished / resets.MANIFEST).write_text(f"scope memory\n{MEMORIES[1]}\n")
    (unfinished / resets.DONE).symlink_to(target)
    before = tree(elsewhere)
    finished = ok(cli("reset", "--memory", "--yes", "--json"))
    assert finished["trash"] == "archive/.reset/20200101T000000" and finished["files"] == 1
    assert tree(elsewhere) == before
    assert (unfinished / resets.DONE).is_file() and not (unfinished / resets.DONE).is_symlink()
    ok(cli("reset", "--undo", "--json"))
    assert tree(elsewhere) == before


def test_a_manifest_moves_only_memory_files(cli: Cli, filled: Path) -> None:
    """A manifest written by someone else (an unfinished reset planted in the vault) moves
    no file a reset would not take, into the trash or out of it."""
    write(filled, ".git/config", "[core]\n")
    unfinished = trash(filled) / "20200101T000000"
    names = [".git/config", "kenomem.toml", "README.md", "../outside.md", "semantic/../x.md"]
    write(filled, f"{TRASH[0]}/{TRASH[1]}/20200101T000000/manifest.txt", "\n".join(
        ["scope memory", *names, "semantic/.hidden.md", MEMORIES[1]]
    ) + "\n")  # fmt: skip
    write(filled, f"{TRASH[0]}/{TRASH[1]}/20200101T000000/foundation.md/x.md", "# a folder\n")
    before = outside_state(filled)
    finished = ok(cli("reset", "--memory", "--yes", "--json"))
    assert finished["files"] == 1  # the episode only
    after = outside_state(filled)
    assert after == {rel: data for rel, data in before.items() if rel != MEMORIES[1]}
    # ... and undo brings back only what the manifest may name.
    manifest = unfinished / resets.MANIFEST
    manifest.write_text("scope all\nkenomem.toml\nfoundation.md\n" + MEMORIES[1] + "\n")
    (unfinished / "kenomem.toml").write_text("[index]\nengine = 'planted'\n")
    (filled / "foundation.md").unlink()
    undone = ok(cli("reset", "--undo", "--json"))
    assert undone["files"] == 1 and undone["conflicts"] == []
    assert (filled / "kenomem.toml").read_bytes() == before["kenomem.toml"]
    assert not (filled / "foundation.md").exists()  # a folder there is no file a reset took
    assert (filled / MEMORIES[1]).read_bytes() == before[MEMORIES[1]]


@pytest.mark.parametrize(
    ("rel", "takes"),
    [
        ("semantic/a.md", True),
        ("archive/episodic/2026-02/b.md", True),
        ("buffer/2026-03-01.md", True),
        ("foundation.md", True),
        ("kenomem.toml", False),
        ("README.md", False),
        (".git/config", False),
        ("semantic/a.txt", False),
        ("buffer/old/2026-03-01.md", False),
        ("semantic/.hidden.md", False),
        ("archive/.reset/x/semantic/a.md", False),
        ("semantic/../../x.md", False),
        ("/etc/x.md", False),
        ("semantic//a.md", False),
        ("semantic/a\0.md", False),
        ("notes/a.md", False),
    ],
)
def test_what_a_manifest_may_name(rel: str, takes: bool) -> None:
    assert resettable(rel) is takes


# -- a trash an older version left in .kenomem/trash/ -------------------------------------


def old_reset(root: Path, name: str, files: dict[str, bytes], *, done: bool = True) -> Path:
    """A reset folder as an older version left it in `.kenomem/trash/`."""
    folder = root / ".kenomem" / "trash" / name
    folder.mkdir(parents=True)
    (folder / resets.MANIFEST).write_text("scope memory\n" + "".join(f"{r}\n" for r in files))
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    if done:
        (folder / resets.DONE).write_text("2026-03-01T00:00:00+00:00")
    return folder


def test_an_older_versions_trash_is_taken_over_and_undone(cli: Cli, filled: Path) -> None:
    before = outside_state(filled)
    gone = {rel: (filled / rel).read_bytes() for rel in (MEMORIES[1], MEMORIES[2], DAY)}
    for rel in gone:
        (filled / rel).unlink()
    old_reset(filled, "20260301T000000", gone)
    theirs = filled / ".kenomem" / "trash" / "photos"  # no manifest: not a reset's
    theirs.mkdir()
    (theirs / "cat.jpg").write_bytes(b"\xff\xd8 a cat")
    undone = ok(cli("reset", "--undo", "--json"))
    assert undone["trash"] == "archive/.reset/20260301T000000"
    assert (undone["files"], undone["conflicts"]) == (len(gone), [])
    assert outside_state(filled) == before
    assert (theirs / "cat.jpg").read_bytes() == b"\xff\xd8 a cat"  # left where it was


@pytest.mark.parametrize("command", [["prune", "--json"], ["reset", "--memory", "--yes", "--json"]])
def test_an_older_versions_trash_moves_on_the_next_prune_or_reset(
    cli: Cli, filled: Path, command: list[str]
) -> None:
    settings_file(filled, "[reset]\ntrash_days = 1.0\n")
    recent = old_reset(filled, "20260301T000000", {"episodic/a.md": b"# A\n"})
    old_reset(filled, "20260302T000000", {"episodic/b.md": b"# B\n"}, done=False)
    stamp = 1_000_000_000
    os.utime(recent / resets.DONE, (stamp, stamp))  # old enough to empty
    ok(cli(*command))  # a reset finishes the unfinished one: it is still there
    assert not (filled / ".kenomem" / "trash").exists()
    names = sorted(p.name for p in trash(filled).iterdir() if p.is_dir())
    assert "20260301T000000" not in names  # emptied, in its new place
    assert "20260302T000000" in names
    assert (trash(filled) / "20260302T000000" / "episodic" / "b.md").read_bytes() == b"# B\n"


def test_an_older_trash_that_is_a_link_is_left_alone(
    cli: Cli, filled: Path, elsewhere: Path
) -> None:
    (filled / ".kenomem").mkdir(mode=0o700, exist_ok=True)
    (filled / ".kenomem" / "trash").symlink_to(elsewhere, target_is_directory=True)
    before = tree(elsewhere)
    for command in (["reset", "--memory", "--yes", "--json"], ["prune", "--json"]):
        ok(cli(*command))
    undone = ok(cli("reset", "--undo", "--json"))
    assert undone["conflicts"] == []
    assert tree(elsewhere) == before  # nothing moved from it, nothing emptied
    assert (filled / ".kenomem" / "trash").is_symlink()
    assert not (filled / "semantic" / "x.md").exists()
