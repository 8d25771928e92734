"""`kenomem doctor`: what it finds on real vaults, what `--fix` repairs, and what it never
touches (issue 3; SPEC 2, 4 and 7)."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kenomem.index import SyncBatch
from kenomem.vault.core import CoreVault
from kenomem.vault.doctor import DoctorRequest, doctor
from tests.conftest import Cli, index_files, write
from tests.vault.helpers import (
    ID_A,
    findings,
    indexed,
    memory,
    one_json,
    recalled,
    run_doctor,
)

ID_B = "mem_20260102_090000_bbbb"
MISSING = "mem_20250101_000000_dead"
UNFIXABLE = {"unreadable", "duplicate-id", "broken-link", "outside", "plain-note"}
ALL_KINDS = UNFIXABLE | {"no-id", "index", "lock", "watcher"}

BROKEN = """---
id: mem_20260103_090000_cccc
title: Broken
tags: [one, two
importance: 3
---

The zeppelin hangar is broken.
"""

UNCLOSED = """---
id: mem_20260104_090000_dddd
title: Never closed

The zeppelin never landed.
"""


def paths_of(doc: dict[str, Any], kind: str) -> set[str]:
    return {f["path"] for f in findings(doc, kind)}


def remember(cli: Cli, text: str, *args: str) -> dict[str, Any]:
    return one_json(cli("remember", "--json", "--type", "semantic", *args, text))


def snapshot(root: Path) -> dict[str, bytes]:
    """Every regular file under `root` (derived state included), by relative path."""
    files = {}
    for folder, _dirs, names in os.walk(root):
        for name in names:
            full = Path(folder, name)
            if full.is_symlink() or not stat.S_ISREG(full.lstat().st_mode):
                continue
            files[full.relative_to(root).as_posix()] = full.read_bytes()
    return files


def dead_pid() -> int:
    """The pid of a process that has run and been reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    with pytest.raises(ProcessLookupError):
        os.kill(proc.pid, 0)
    return proc.pid


def lock_file(vault_dir: Path) -> Path:
    return vault_dir / ".kenomem" / "lock"


def heartbeat_file(vault_dir: Path) -> Path:
    return vault_dir / ".kenomem" / "watcher"


# -- healthy vaults ----------------------------------------------------------------------


def test_healthy_vault_has_no_findings(cli: Cli, vault_dir: Path) -> None:
    old = remember(cli, "The office is on Elm street")
    remember(cli, "The office moved to Oak avenue", "--supersedes", old["id"])
    remember(cli, "Met Dana at the harbour to plan the regatta", "--type", "episodic")
    write(vault_dir, "buffer/2026-03-01.md", "---\ndate: 2026-03-01\n---\n\n## 10:00 x\n\nhi\n")
    write(vault_dir, ".obsidian/workspace.md", "# editor state\n")
    write(vault_dir, "semantic/notes.txt", "not markdown\n")

    doc = run_doctor(cli)
    assert doc["findings"] == []
    assert doc["healthy"] is True
    assert doc["fixed"] == []
    assert doc["files"] == 3

    text = cli("doctor")
    assert text.code == 0
    assert text.out.strip()
    first_words = {line.split()[0] for line in text.out.splitlines() if line.split()}
    assert not first_words & ALL_KINDS


def test_freshly_initialised_vault_is_healthy(cli: Cli, vault_dir: Path) -> None:
    # The index is derived: one that was simply never built yet is nothing to report.
    assert not (vault_dir / ".kenomem").exists()
    doc = run_doctor(cli)
    assert doc["findings"] == []
    assert doc["healthy"] is True


def test_fix_on_a_healthy_vault_does_nothing(cli: Cli, vault_dir: Path) -> None:
    remember(cli, "The kettle is descaled monthly")
    before = snapshot(vault_dir)
    doc = run_doctor(cli, "--fix")
    assert doc["findings"] == []
    assert doc["fixed"] == []
    assert {k: v for k, v in snapshot(vault_dir).items() if not k.startswith(".kenomem/")} == {
        k: v for k, v in before.items() if not k.startswith(".kenomem/")
    }


# -- files that cannot be read -----------------------------------------------------------


@pytest.mark.parametrize(("text", "line"), [(BROKEN, 5), (UNCLOSED, 1)])
def test_unparseable_frontmatter_is_reported_with_path_and_line(
    cli: Cli, vault_dir: Path, text: str, line: int
) -> None:
    write(vault_dir, "semantic/kettle.md", memory(ID_A, "Kettle", "The kettle."))
    path = write(vault_dir, "semantic/broken.md", text)
    indexed(vault_dir)

    doc = run_doctor(cli)
    (finding,) = findings(doc, "unreadable")
    assert finding["path"] == "semantic/broken.md"
    assert finding["line"] == line
    assert finding["message"]
    assert finding["fixable"] is False
    assert doc["healthy"] is False
    assert f"semantic/broken.md:{line}" in cli("doctor").out
    assert path.read_text(encoding="utf-8") == text


@pytest.mark.parametrize(
    ("data", "reason", "line"),
    [
        (b"# Zeppelin\n\x00\x01\x02 zeppelin\n", "binary", None),
        ("# Zeppelin\n\nzeppelin caf\xe9\n".encode("latin-1"), "UTF-8", 3),
    ],
    ids=["binary", "latin-1"],
)
def test_binary_and_non_utf8_files_are_reported(
    cli: Cli, vault_dir: Path, data: bytes, reason: str, line: int | None
) -> None:
    path = vault_dir / "semantic/odd.md"
    path.write_bytes(data)
    doc = run_doctor(cli)
    (finding,) = findings(doc, "unreadable")
    assert finding["path"] == "semantic/odd.md"
    assert reason in finding["message"]
    assert finding["line"] == line
    assert path.read_bytes() == data


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_symlink_out_of_the_vault_is_reported(
    cli: Cli, vault_dir: Path, tmp_path: Path, kind: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nzeppelin plans\n", encoding="utf-8")
    link = vault_dir / ("semantic/link.md" if kind == "file" else "semantic/linked")
    link.symlink_to(outside / "secret.md" if kind == "file" else outside)

    doc = run_doctor(cli, "--fix")
    (finding,) = findings(doc, "unreadable")
    assert finding["path"] == link.relative_to(vault_dir).as_posix()
    assert "outside" in finding["message"]
    # Not followed, even by --fix: the file outside got no id written into it.
    assert (outside / "secret.md").read_text(encoding="utf-8") == "# Secret\n\nzeppelin plans\n"
    assert link.is_symlink()
    assert recalled(cli, "zeppelin") == []


# -- duplicate ids -----------------------------------------------------------------------


@pytest.mark.parametrize("copy_to", ["semantic/0-copy.md", "episodic/a/copy.md"])
def test_the_copy_made_later_is_the_duplicate(cli: Cli, vault_dir: Path, copy_to: str) -> None:
    made = remember(cli, "The alpaca sleeps in the barn")
    original = vault_dir / made["path"]
    copy = vault_dir / copy_to
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(original, copy)
    data = copy.read_bytes()

    for step in ("before", "after reindex"):
        if step == "after reindex":
            assert cli("reindex").code == 0
        doc = run_doctor(cli)
        (finding,) = findings(doc, "duplicate-id")
        assert finding["path"] == copy_to, step
        assert made["id"] in finding["message"]
        assert made["path"] in finding["message"]
        assert finding["fixable"] is False
        shown = one_json(cli("show", "--json", made["id"]))
        assert shown["path"] == made["path"], step
        assert [r["path"] for r in recalled(cli, "alpaca")] == [made["path"]], step

    doc = run_doctor(cli, "--fix")
    assert paths_of(doc, "duplicate-id") == {copy_to}
    assert copy.read_bytes() == data
    assert run_doctor(cli)["findings"] == doc["findings"]


def test_the_original_keeps_its_id_when_both_files_are_touched(cli: Cli, vault_dir: Path) -> None:
    # Same bytes, new mtimes (a checkout, a sync tool): both files are read again, and the
    # file that held the id before still holds it.
    made = remember(cli, "The alpaca sleeps in the barn")
    original = vault_dir / made["path"]
    copy = vault_dir / "semantic/0-copy.md"
    shutil.copyfile(original, copy)
    day = 86_400
    for path in (original, copy):
        os.utime(path, (time.time() - 2 * day, time.time() - 2 * day))
    assert one_json(cli("show", "--json", made["id"]))["path"] == made["path"]
    for path in (original, copy):
        os.utime(path, (time.time() - day, time.time() - day))

    assert one_json(cli("show", "--json", made["id"]))["path"] == made["path"]
    assert [r["path"] for r in recalled(cli, "alpaca")] == [made["path"]]
    assert paths_of(run_doctor(cli), "duplicate-id") == {"semantic/0-copy.md"}


# -- links -------------------------------------------------------------------------------


def test_links_to_missing_ids_are_reported(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, "semantic/new.md", memory(ID_A, "New", "Oak avenue.", supersedes=MISSING))
    write(
        vault_dir,
        "archive/semantic/old.md",
        memory(ID_B, "Old", "Elm street.", status="superseded", superseded_by=MISSING),
    )
    write(
        vault_dir,
        "semantic/fine.md",
        memory("mem_20260105_090000_eeee", "Fine", "Fine.", supersedes=ID_B),
    )
    doc = run_doctor(cli)
    broken = {f["path"]: f["message"] for f in findings(doc, "broken-link")}
    assert set(broken) == {"semantic/new.md", "archive/semantic/old.md"}
    assert "supersedes" in broken["semantic/new.md"]
    assert MISSING in broken["semantic/new.md"]
    assert "superseded_by" in broken["archive/semantic/old.md"]
    assert MISSING in broken["archive/semantic/old.md"]
    assert all(f["fixable"] is False for f in findings(doc, "broken-link"))


# -- files kenomem does not read ---------------------------------------------------------


def test_markdown_outside_the_memory_folders_is_reported(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, "semantic/kettle.md", memory(ID_A, "Kettle", "The kettle."))
    write(vault_dir, "stray.md", "# Stray\n")
    write(vault_dir, "notes/todo.md", "# Todo\n")
    write(vault_dir, "notes/deep/er.md", "# Deeper\n")
    write(vault_dir, "notes/list.txt", "not markdown\n")
    write(vault_dir, ".obsidian/cache.md", "# hidden\n")
    write(vault_dir, "buffer/2026-03-01.md", "---\ndate: 2026-03-01\n---\n")
    assert (vault_dir / "README.md").is_file()
    assert (vault_dir / "foundation.md").is_file()

    doc = run_doctor(cli)
    assert paths_of(doc, "outside") == {"stray.md", "notes/todo.md", "notes/deep/er.md"}
    assert all(f["fixable"] is False for f in findings(doc, "outside"))
    assert run_doctor(cli, "--fix")["findings"] == doc["findings"]
    assert (vault_dir / "stray.md").read_text(encoding="utf-8") == "# Stray\n"


# -- secrets written by hand --------------------------------------------------------------

AWS_KEY = "AKIA" + "Q7XJ2M4K9P3W8R5T"
PASSWORD = "hunter2" + "-" + "x9"


def test_secrets_written_by_hand_are_reported_with_line_and_kind(cli: Cli, vault_dir: Path) -> None:
    # The doors refuse secrets; a file edited by hand never went through one.
    write(
        vault_dir,
        "semantic/deploy.md",
        memory(ID_A, "Deploy", f"Deploy with the bot.\n\nDB_PASSWORD={PASSWORD}"),
    )
    write(vault_dir, "archive/semantic/old.md", memory(ID_B, "Old", f"The old key: {AWS_KEY}"))
    write(
        vault_dir,
        "buffer/2026-03-01.md",
        "---\ndate: 2026-03-01\nconsolidated: null\n---\n\n## 09:00:00 Ann\n"
        "the staging db is Postgres://admin:pw@db.internal/app\n",
    )
    foundation = vault_dir / "foundation.md"
    foundation.write_text(
        foundation.read_text(encoding="utf-8") + "\nMy card: 4111.1111.1111.1111\n",
        encoding="utf-8",
    )
    lines = len(foundation.read_text(encoding="utf-8").splitlines())
    cli("reindex")
    before = snapshot(vault_dir)

    result = cli("doctor", "--json")
    doc = json.loads(result.out)
    found = {(f["path"], f["line"]): f["message"] for f in findings(doc, "secret")}
    assert set(found) == {
        ("semantic/deploy.md", 8),
        ("archive/semantic/old.md", 6),
        ("buffer/2026-03-01.md", 7),
        ("foundation.md", lines),
    }
    assert "password or token" in found[("semantic/deploy.md", 8)]
    assert "AWS access key: AKIA…" in found[("archive/semantic/old.md", 6)]
    assert "password in a URL" in found[("buffer/2026-03-01.md", 7)]
    assert "payment card number" in found[("foundation.md", lines)]
    assert all(f["fixable"] is False for f in findings(doc, "secret"))
    for secret in (PASSWORD, AWS_KEY, "Q7XJ", "4111.1111", ":pw@"):
        assert secret not in result.out and secret not in result.err
    text = cli("doctor")
    assert "semantic/deploy.md:8" in text.out + text.err
    run_doctor(cli, "--fix")
    assert snapshot(vault_dir) == before  # reported, never rewritten


def test_no_secret_is_reported_in_ordinary_notes(cli: Cli, vault_dir: Path) -> None:
    write(
        vault_dir,
        "semantic/notes.md",
        memory(
            ID_A,
            "Notes",
            "The password is in 1Password.\ncommit 3f786850e387550fdab836ed7e6dc881de23001b\n"
            "Set DB_PASSWORD=${DB_PASSWORD} in the env; max_tokens=1000.",
        ),
    )
    assert findings(run_doctor(cli), "secret") == []


# -- the index ---------------------------------------------------------------------------


def test_document_missing_from_the_index_is_reported_and_fixed(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, "semantic/kettle.md", memory(ID_A, "Kettle", "The kettle is descaled."))
    write(vault_dir, "semantic/alpaca.md", memory(ID_B, "Alpaca", "The alpaca sleeps."))
    vault = CoreVault.open(vault_dir)
    vault.sync()
    batch = SyncBatch()
    batch.deletes.append(ID_B)
    vault.engine.apply(batch)

    doc = run_doctor(cli)
    (finding,) = findings(doc, "index")
    assert finding["fixable"] is True

    fixed = run_doctor(cli, "--fix")
    assert any("index" in action for action in fixed["fixed"])
    assert run_doctor(cli)["findings"] == []
    assert [r["id"] for r in recalled(cli, "alpaca")] == [ID_B]


def _add(vault_dir: Path) -> None:
    write(vault_dir, "semantic/alpaca.md", memory(ID_B, "Alpaca", "The alpaca sleeps."))


def _delete(vault_dir: Path) -> None:
    (vault_dir / "semantic/walrus.md").unlink()


def _move(vault_dir: Path) -> None:
    os.rename(vault_dir / "semantic/walrus.md", vault_dir / "episodic/walrus.md")


@pytest.mark.parametrize("change", [_add, _delete, _move], ids=["added", "deleted", "moved"])
def test_index_older_than_the_state_is_reported_and_fixed(
    cli: Cli, vault_dir: Path, tmp_path: Path, change: Callable[[Path], None]
) -> None:
    # The state knows the files as they are, but the index is the one from before.
    write(vault_dir, "semantic/kettle.md", memory(ID_A, "Kettle", "The kettle is descaled."))
    walrus_id = "mem_20260106_090000_ffff"
    write(vault_dir, "semantic/walrus.md", memory(walrus_id, "Walrus", "The walrus swims."))
    indexed(vault_dir)
    index_dir = vault_dir / ".kenomem" / "index"
    shutil.copytree(index_dir, tmp_path / "old-index")
    change(vault_dir)
    indexed(vault_dir)
    shutil.rmtree(index_dir)
    shutil.copytree(tmp_path / "old-index", index_dir)

    doc = run_doctor(cli)
    assert [f["kind"] for f in doc["findings"]] == ["index"]
    assert doc["findings"][0]["fixable"] is True

    fixed = run_doctor(cli, "--fix")
    assert any("index" in action for action in fixed["fixed"])
    assert run_doctor(cli)["findings"] == []
    expected = {
        _add: {"alpaca": ["semantic/alpaca.md"], "walrus": ["semantic/walrus.md"]},
        _delete: {"alpaca": [], "walrus": []},
        _move: {"alpaca": [], "walrus": ["episodic/walrus.md"]},
    }[change]
    for word, paths in expected.items():
        assert [r["path"] for r in recalled(cli, word)] == paths
    assert [r["id"] for r in recalled(cli, "kettle")] == [ID_A]


@pytest.mark.parametrize("change", [_add, _delete, _move], ids=["added", "deleted", "moved"])
def test_a_change_the_next_scan_indexes_is_no_problem(
    cli: Cli, vault_dir: Path, change: Callable[[Path], None]
) -> None:
    # An edit, a pull: the index has not seen it yet, and the next command's change scan
    # indexes it before it answers. doctor says nothing of it, and writes nothing.
    write(vault_dir, "semantic/kettle.md", memory(ID_A, "Kettle", "The kettle is descaled."))
    write(vault_dir, "semantic/walrus.md", memory("mem_20260106_090000_ffff", "Walrus", "Swims."))
    indexed(vault_dir)
    change(vault_dir)
    before = snapshot(vault_dir)
    doc = run_doctor(cli)
    assert doc["findings"] == [] and doc["healthy"] is True
    assert snapshot(vault_dir) == before
    # What it would have found once that scan had run wrong: still found.
    vault = CoreVault.open(vault_dir)
    vault.sync()
    lost = SyncBatch()
    lost.deletes.append(ID_A)
    vault.engine.apply(lost)
    assert [f["kind"] for f in run_doctor(cli)["findings"]] == ["index"]


def test_unreadable_index_is_reported_and_rebuilt(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, "semantic/kettle.md", memory(ID_A, "Kettle", "The kettle is descaled."))
    indexed(vault_dir)
    segments = index_files(vault_dir)
    assert segments
    for segment in segments:
        segment.write_bytes(b"")

    doc = run_doctor(cli)
    (finding,) = findings(doc, "index")
    assert finding["fixable"] is True
    assert all(p.read_bytes() == b"" for p in segments if p.exists())  # reported, not repaired

    fixed = run_doctor(cli, "--fix")
    assert any("index" in action for action in fixed["fixed"])
    assert run_doctor(cli)["findings"] == []
    assert [r["id"] for r in recalled(cli, "kettle")] == [ID_A]


# -- what dead processes left ------------------------------------------------------------


def test_lock_left_by_a_dead_process(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, "semantic/kettle.md", memory(ID_A, "Kettle", "The kettle."))
    indexed(vault_dir)
    pid = dead_pid()
    lock_file(vault_dir).write_text(str(pid), encoding="ascii")

    doc = run_doctor(cli)
    (finding,) = findings(doc, "lock")
    assert finding["path"] == ".kenomem/lock"
    assert str(pid) in finding["message"]
    assert finding["fixable"] is True
    assert lock_file(vault_dir).read_text(encoding="ascii") == str(pid)

    fixed = run_doctor(cli, "--fix")
    assert any("lock" in action for action in fixed["fixed"])
    assert not lock_file(vault_dir).exists() or lock_file(vault_dir).read_bytes() == b""
    assert run_doctor(cli)["findings"] == []


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_lock_held_by_a_live_process_is_not_reported(cli: Cli, vault_dir: Path) -> None:
    import fcntl

    (vault_dir / "kenomem.toml").write_text("[write]\nlock_timeout_seconds = 1\n", "utf-8")
    write(vault_dir, "semantic/kettle.md", memory(ID_A, "Kettle", "The kettle."))
    indexed(vault_dir)
    pid = dead_pid()
    lock_file(vault_dir).write_text(str(pid), encoding="ascii")
    fd = os.open(lock_file(vault_dir), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        doc = run_doctor(cli, "--fix")
        assert findings(doc, "lock") == []
        assert doc["fixed"] == []
        assert lock_file(vault_dir).read_text(encoding="ascii") == str(pid)
    finally:
        os.close(fd)


def test_heartbeat_of_a_dead_watcher(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, "semantic/kettle.md", memory(ID_A, "Kettle", "The kettle."))
    indexed(vault_dir)
    pid = dead_pid()
    beat = f"{pid} {time.time():.3f} 0\n"
    heartbeat_file(vault_dir).write_text(beat, encoding="ascii")

    doc = run_doctor(cli)
    (finding,) = findings(doc, "watcher")
    assert finding["path"] == ".kenomem/watcher"
    assert str(pid) in finding["message"]
    assert finding["fixable"] is True
    assert heartbeat_file(vault_dir).read_text(encoding="ascii") == beat

    fixed = run_doctor(cli, "--fix")
    assert any("watcher" in action or "heartbeat" in action for action in fixed["fixed"])
    assert not heartbeat_file(vault_dir).exists()
    assert run_doctor(cli)["findings"] == []


def test_heartbeat_of_a_live_watcher_is_not_reported(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, "semantic/kettle.md", memory(ID_A, "Kettle", "The kettle."))
    indexed(vault_dir)
    beat = f"{os.getpid()} {time.time():.3f} 0\n"
    heartbeat_file(vault_dir).write_text(beat, encoding="ascii")
    doc = run_doctor(cli, "--fix")
    assert doc["findings"] == []
    assert heartbeat_file(vault_dir).read_text(encoding="ascii") == beat


# -- files without an id -----------------------------------------------------------------

NO_ID_FILES = {
    "semantic/keys.md": (
        b"---\n# a comment a person wrote\ntitle: Keys   # trailing comment\n"
        b"colour: blue\ntags: [birds]\n---\n\nThe keyed heron fishes.\n"
    ),
    "semantic/crlf.md": b"---\r\ntitle: Crlf\r\n---\r\n\r\nThe crlf heron fishes.\r\n",
    "semantic/bom.md": b"\xef\xbb\xbf---\ntitle: Bom\n---\n\nThe bom heron fishes.\n",
    "semantic/emptyfm.md": b"---\n---\n\nThe emptyfm heron fishes.\n",
}
# Notes as a person writes them, without frontmatter: never given one.
PLAIN_NOTES = {
    "semantic/handnote.md": b"# Hand note\n\nThe plain heron fishes.\n",
    "semantic/bomplain.md": b"\xef\xbb\xbf# Bomplain\n\nThe bomplain heron fishes.\n",
    "procedural/bare.md": b"The bare heron fishes, no heading at all.\n",
}


def without_id(data: bytes, mem_id: str) -> bytes:
    """`data` with the one line `id: <mem_id>` taken out."""
    stripped, count = re.subn(rb"(?m)^id: " + re.escape(mem_id.encode()) + rb"\r?\n", b"", data)
    assert count == 1, data
    return stripped


def same_but_the_id(new: bytes, old: bytes, mem_id: str) -> bool:
    return without_id(new, mem_id) == old


def test_fix_writes_the_id_kenomem_knew_the_file_by(cli: Cli, vault_dir: Path) -> None:
    for rel, data in NO_ID_FILES.items():
        (vault_dir / rel).write_bytes(data)
    moved_from = vault_dir / "semantic/moved.md"
    moved_from.write_bytes(b"---\ntitle: Moved\n---\n\nThe moved heron fishes.\n")
    indexed(vault_dir)
    (vault_dir / "procedural/sub").mkdir()
    moved = vault_dir / "procedural/sub/moved.md"
    os.rename(moved_from, moved)  # its id was derived where it was first seen
    indexed(vault_dir)
    originals = {**NO_ID_FILES, "procedural/sub/moved.md": moved.read_bytes()}
    known = {r["path"]: r["id"] for r in recalled(cli, "heron")}
    assert set(known) == set(originals)

    doc = run_doctor(cli)
    no_id = {f["path"]: f for f in findings(doc, "no-id")}
    assert set(no_id) == set(originals)
    for rel, finding in no_id.items():
        assert known[rel] in finding["message"]
        assert finding["fixable"] is True
    assert {rel: (vault_dir / rel).read_bytes() for rel in originals} == originals

    fixed = run_doctor(cli, "--fix")
    for rel, mem_id in known.items():
        assert any(mem_id in a and rel in a for a in fixed["fixed"]), (rel, fixed["fixed"])
        new = (vault_dir / rel).read_bytes()
        assert same_but_the_id(new, originals[rel], mem_id), (rel, new)
    assert run_doctor(cli)["findings"] == []
    assert {r["path"]: r["id"] for r in recalled(cli, "heron")} == known
    for rel, mem_id in known.items():
        assert one_json(cli("show", "--json", mem_id))["path"] == rel
    # And once written, the id is the file's own: a reindex from nothing keeps it.
    shutil.rmtree(vault_dir / ".kenomem")
    assert {r["path"]: r["id"] for r in recalled(cli, "heron")} == known


def test_a_note_without_frontmatter_is_information_never_written(cli: Cli, vault_dir: Path) -> None:
    # README and docs/vault.md: such a note is a memory, and is never given a frontmatter.
    for rel, data in PLAIN_NOTES.items():
        (vault_dir / rel).write_bytes(data)
    moved_from = vault_dir / "semantic/first.md"
    moved_from.write_bytes(b"# First\n\nThe moved plain heron fishes.\n")
    indexed(vault_dir)
    os.rename(moved_from, vault_dir / "episodic/moved.md")  # its id: from where first seen
    indexed(vault_dir)
    originals = {rel: (vault_dir / rel).read_bytes() for rel in [*PLAIN_NOTES, "episodic/moved.md"]}
    known = {r["path"]: r["id"] for r in recalled(cli, "heron")}
    assert set(known) == set(originals)

    for args in ((), ("--fix",)):
        result = cli("doctor", "--json", *args)
        assert result.code == 0, result
        doc = json.loads(result.out)
        assert doc["healthy"] is True and doc["fixed"] == []
        notes = {f["path"]: f for f in findings(doc, "plain-note")}
        assert set(notes) == set(originals)
        assert [f for f in doc["findings"] if f["kind"] != "plain-note"] == []
        for rel, finding in notes.items():
            assert known[rel] in finding["message"] and finding["fixable"] is False
        assert {rel: (vault_dir / rel).read_bytes() for rel in originals} == originals
    text = cli("doctor")
    assert text.code == 0 and "semantic/handnote.md" in text.out and not text.err
    assert {r["path"]: r["id"] for r in recalled(cli, "heron")} == known


# -- everything at once: nothing changes without --fix, only safe repairs with it -------


@pytest.fixture
def troubled(vault_dir: Path, tmp_path: Path) -> dict[str, Any]:
    """A vault with one finding of every kind."""
    write(vault_dir, "semantic/kettle.md", memory(ID_A, "Kettle", "The kettle is descaled."))
    copy_of = write(vault_dir, "semantic/alpaca.md", memory(ID_B, "Alpaca", "The alpaca."))
    write(vault_dir, "semantic/hand.md", "---\ntitle: Hand\n---\n\nThe hand-made heron fishes.\n")
    write(vault_dir, "semantic/plain.md", "# Plain\n\nA plain note.\n")
    write(vault_dir, "semantic/gone.md", memory("mem_20260107_090000_0000", "Gone", "Gone."))
    vault = CoreVault.open(vault_dir)
    vault.sync()
    lost = SyncBatch()  # an entry the index lost: a change the next scan would not see
    lost.deletes.append(ID_A)
    vault.engine.apply(lost)
    hand_id = {path: mem_id for mem_id, path in vault.ids().items()}["semantic/hand.md"]
    shutil.copyfile(copy_of, vault_dir / "semantic/0-copy.md")
    write(vault_dir, "semantic/broken.md", BROKEN)
    (vault_dir / "semantic/binary.md").write_bytes(b"\x00\x01zeppelin")
    (vault_dir / "semantic/latin.md").write_bytes("caf\xe9 zeppelin\n".encode("latin-1"))
    write(
        vault_dir,
        "semantic/link.md",
        memory("mem_20260108_090000_1111", "L", "x.", supersedes=MISSING),
    )
    write(vault_dir, "stray.md", "# Stray\n")
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nzeppelin\n", encoding="utf-8")
    (vault_dir / "semantic/out.md").symlink_to(outside)
    (vault_dir / "semantic/gone.md").unlink()
    pid = dead_pid()
    lock_file(vault_dir).write_text(str(pid), encoding="ascii")
    heartbeat_file(vault_dir).write_text(f"{pid} {time.time():.3f} 0\n", encoding="ascii")
    return {"hand_id": hand_id, "outside": outside, "pid": pid}


def test_without_fix_nothing_in_the_vault_changes(
    cli: Cli, vault_dir: Path, troubled: dict[str, Any]
) -> None:
    before = snapshot(vault_dir)
    outside = troubled["outside"].read_bytes()
    for args in ((), ("--json",), ("--json",)):
        result = cli("doctor", *args)
        assert result.code == 1, result.err
    doc = run_doctor(cli)
    assert {f["kind"] for f in doc["findings"]} == ALL_KINDS
    assert doc["healthy"] is False
    assert doc["fixed"] == []
    assert snapshot(vault_dir) == before
    assert lock_file(vault_dir).read_text(encoding="ascii") == str(troubled["pid"])
    assert troubled["outside"].read_bytes() == outside


def test_core_doctor_without_fix_reports_the_same(
    cli: Cli, vault_dir: Path, troubled: dict[str, Any]
) -> None:
    result = doctor(CoreVault.open(vault_dir), DoctorRequest())
    assert {f.kind for f in result.findings} == ALL_KINDS
    assert result.fixed == []
    assert not result.healthy
    assert {f.kind for f in result.findings if f.fixable} == ALL_KINDS - UNFIXABLE
    assert run_doctor(cli)["findings"] == [f._asdict() for f in result.findings]


def test_fix_repairs_only_what_is_safe(cli: Cli, vault_dir: Path, troubled: dict[str, Any]) -> None:
    known = troubled["hand_id"]
    before = snapshot(vault_dir)

    doc = run_doctor(cli, "--fix")
    assert {f["kind"] for f in doc["findings"]} == ALL_KINDS  # what was found, then fixed
    actions = doc["fixed"]
    assert any("lock" in a for a in actions)
    assert any("watcher" in a or "heartbeat" in a for a in actions)
    assert any(known in a and "semantic/hand.md" in a for a in actions)
    assert any("index" in a for a in actions)
    assert len(actions) == 4

    after = run_doctor(cli)
    assert {f["kind"] for f in after["findings"]} == UNFIXABLE
    assert after["fixed"] == []
    assert not lock_file(vault_dir).exists() or lock_file(vault_dir).read_bytes() == b""
    assert not heartbeat_file(vault_dir).exists()
    now = snapshot(vault_dir)
    changed = {rel for rel in before.keys() | now.keys() if before.get(rel) != now.get(rel)}
    assert {rel for rel in changed if not rel.startswith(".kenomem/")} == {"semantic/hand.md"}
    assert same_but_the_id(now["semantic/hand.md"], before["semantic/hand.md"], known)
    assert troubled["outside"].read_text(encoding="utf-8") == "# Outside\n\nzeppelin\n"
    assert run_doctor(cli, "--fix")["fixed"] == []
    assert [r["id"] for r in recalled(cli, "heron")] == [known]
    assert [r["id"] for r in recalled(cli, "kettle")] == [ID_A]


# -- the command line --------------------------------------------------------------------


def test_doctor_json_is_one_document(cli: Cli, vault_dir: Path, troubled: dict[str, Any]) -> None:
    result = cli("doctor", "--json")
    assert result.code == 1
    doc = json.loads(result.out)
    assert set(doc) == {"vault", "files", "healthy", "findings", "fixed"}
    assert doc["vault"] == str(vault_dir)
    # The .md files in the memory folders: kettle, alpaca, hand, plain, 0-copy, broken,
    # binary, latin and link (the symlink out of the vault is not followed).
    assert doc["files"] == 9
    assert doc["healthy"] is False
    assert doc["fixed"] == []
    for finding in doc["findings"]:
        assert set(finding) == {"kind", "path", "message", "line", "fixable"}
        assert finding["kind"] in ALL_KINDS
        assert isinstance(finding["message"], str) and finding["message"]


def test_doctor_text_lists_the_findings(
    cli: Cli, vault_dir: Path, troubled: dict[str, Any]
) -> None:
    result = cli("doctor")
    assert result.code == 1
    doc = run_doctor(cli)
    for finding in doc["findings"]:
        assert finding["kind"] in result.out
        assert finding["path"] in result.out
    assert "semantic/broken.md:5" in result.out
    assert "{" not in result.out


# -- the exit code: 1 while a problem is left --------------------------------------------


def test_a_problem_makes_doctor_exit_1_until_fixed(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, "semantic/kettle.md", memory(ID_A, "Kettle", "The kettle."))
    indexed(vault_dir)
    lock_file(vault_dir).write_text(str(dead_pid()), encoding="ascii")
    for args in ((), ("--json",)):
        result = cli("doctor", *args)
        assert result.code == 1, result
        assert "lock" in result.out  # the finding, on stdout; why it exits 1, on stderr:
        assert result.err.splitlines() == [
            "error: 1 problem found in the vault",
            "hint: kenomem doctor --fix repairs what is safe to repair",
        ]
    fixed = cli("doctor", "--fix")
    assert fixed.code == 0, fixed
    assert "cleared the lock file" in fixed.out
    assert cli("doctor").code == 0


def test_a_fix_that_leaves_a_problem_exits_1(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, "semantic/broken.md", BROKEN)
    lock_file(vault_dir).parent.mkdir(parents=True, exist_ok=True)
    lock_file(vault_dir).write_text(str(dead_pid()), encoding="ascii")
    result = cli("doctor", "--fix")
    assert result.code == 1
    assert "cleared the lock file" in result.out and "semantic/broken.md:5" in result.out


def test_a_note_alone_leaves_doctor_at_0(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, "semantic/kettle.md", memory(ID_A, "Kettle", "The kettle."))
    write(vault_dir, "notes/todo.md", "# Todo\n")
    result = cli("doctor")
    assert result.code == 0, result
    assert "notes/todo.md" in result.out
    assert cli("doctor", "--fix").code == 0


def test_an_id_a_person_wrote_that_is_not_text_is_reported_never_replaced(
    cli: Cli, vault_dir: Path
) -> None:
    text = "---\nid: [a, b]  # mine\ntitle: Kettle\n---\n\nThe kettle.\n"
    write(vault_dir, "semantic/kettle.md", text)
    result = cli("doctor", "--fix", "--json")
    (finding,) = [f for f in json.loads(result.out)["findings"] if f["kind"] == "no-id"]
    assert "not one line of text" in finding["message"] and not finding["fixable"]
    assert (vault_dir / "semantic/kettle.md").read_text(encoding="utf-8") == text
    assert result.code == 1
