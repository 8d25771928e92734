"""What killed runs leave under `.kenomem/` (a rebuild's index folder, the temporary files of
atomic writes): reported by `doctor`, removed by `doctor --fix` and `reindex`, and a live
process's files never touched."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kenomem.files.atomic import temp_name
from kenomem.index import leftovers
from tests.conftest import Cli, write
from tests.vault.helpers import ID_A, findings, indexed, memory, recalled, run_doctor

# A run that dies mid-rebuild and mid-write: the fresh index folder is half made, one
# temporary file sits beside a derived file and one in `.kenomem/tmp/`; then it is killed.
KILLED_RUN = """
import sys, time
from pathlib import Path
from kenomem.files.atomic import write_bytes
from kenomem.index import built_beside

state = Path(sys.argv[1]) / ".kenomem"

def hang(_stat):
    print("ready", flush=True)
    time.sleep(600)

def inner(_stat):
    write_bytes(state / "tmp-target", b"y", fsync=False, temp_dir=state / "tmp",
                before_replace=hang)

with built_beside(state / "index" / "whoosh") as fresh:
    (fresh / "segment").write_bytes(b"half an index")
    write_bytes(state / "records.bin", b"x", fsync=False, before_replace=inner)
"""


def killed_run(vault_dir: Path) -> int:
    """Run KILLED_RUN until it hangs, kill it; its pid (no longer running)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_RUN, str(vault_dir)], stdout=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"ready\n"
    finally:
        proc.kill()
        proc.wait()
    with pytest.raises(ProcessLookupError):
        os.kill(proc.pid, 0)
    return proc.pid


@pytest.fixture
def live_pid() -> Iterator[int]:
    """The pid of a process that runs for the whole test."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    yield proc.pid
    proc.kill()
    proc.wait()


def touch(path: Path, age_seconds: float = 0.0) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"partial")
    if age_seconds:
        then = time.time() - age_seconds
        os.utime(path, (then, then))
    return path.as_posix()


@pytest.fixture
def left(vault_dir: Path, live_pid: int) -> dict[str, Any]:
    """A vault after a killed run, with the files of a live one and others to keep."""
    write(vault_dir, "semantic/kettle.md", memory(ID_A, "Kettle", "The kettle is descaled."))
    indexed(vault_dir)
    state = vault_dir / ".kenomem"
    pid = killed_run(vault_dir)
    touch(state / f".watcher.{pid}.tmp")  # a heartbeat killed between write and rename
    touch(state / "tmp" / "unnamed.tmp", age_seconds=3600)  # no pid: old enough
    dead = {
        p.relative_to(vault_dir).as_posix()
        for p in [*state.glob(f"index/*.new-{pid}"), *state.rglob(f".*.{pid}*.tmp")]
    } | {".kenomem/tmp/unnamed.tmp"}
    assert len(dead) == 5, dead  # the index folder and four files
    live = [
        state / "index" / f"whoosh.new-{live_pid}" / "segment",
        state / "tmp" / f".records.bin.{live_pid}.abcdef.tmp",
        state / f".watcher.{live_pid}.tmp",
        state / "tmp" / "fresh.tmp",  # no pid, but just written
        state / "trash" / "2026-03-01T10-00-00" / f".note.md.{pid}.abcdef.tmp",  # a vault file
    ]
    for path in live:
        touch(path)
    return {"pid": pid, "dead": dead, "live": live}


def present(vault_dir: Path, rels: set[str]) -> set[str]:
    return {rel for rel in rels if (vault_dir / rel).exists()}


def test_the_names_found_are_those_kenomem_writes(vault_dir: Path) -> None:
    """A change to `atomic.temp_name` must not leave its files unfound."""
    state = vault_dir / ".kenomem"
    made = temp_name(state / "records.bin", state / "tmp")
    assert str(os.getpid()) in made.name
    dead = made.with_name(made.name.replace(str(os.getpid()), str(2**22 + 7)))
    touch(dead)
    found = leftovers.find(vault_dir)
    assert [(f.path, f.pid) for f in found] == [(f".kenomem/tmp/{dead.name}", 2**22 + 7)]


def test_the_pid_is_read_from_the_right_of_the_name(vault_dir: Path, live_pid: int) -> None:
    """The random part may be all digits and the file's name may hold dots and numbers:
    neither is taken for the pid."""
    tmp = vault_dir / ".kenomem" / "tmp"
    kept = [
        tmp / f".records.bin.{live_pid}.123456.tmp",
        tmp / f".2026-03-01.md.{live_pid}.000777.tmp",
        tmp / f".v1.2.3.md.{live_pid}.a0b1c2.tmp",
    ]
    for path in kept:
        touch(path)
    touch(tmp / f".2026-03-01.md.{2**22 + 7}.123456.tmp")  # no process has this pid
    assert [f.pid for f in leftovers.find(vault_dir)] == [2**22 + 7]
    assert leftovers.clean(vault_dir) and all(path.exists() for path in kept)


def test_doctor_reports_the_leftovers_of_a_killed_run(
    cli: Cli, vault_dir: Path, left: dict[str, Any]
) -> None:
    doc = run_doctor(cli)
    found = {f["path"]: f for f in findings(doc, "leftover")}
    assert set(found) == left["dead"]
    assert all(f["fixable"] for f in found.values())
    assert str(left["pid"]) in found[f".kenomem/index/whoosh.new-{left['pid']}"]["message"]
    assert cli("doctor").code == 1
    assert present(vault_dir, left["dead"]) == left["dead"]  # nothing removed without --fix


def test_doctor_fix_removes_them_and_keeps_a_live_process_files(
    cli: Cli, vault_dir: Path, left: dict[str, Any]
) -> None:
    doc = run_doctor(cli, "--fix")
    assert any("removed 5 temporary files and folders" in a for a in doc["fixed"])
    assert present(vault_dir, left["dead"]) == set()
    assert all(path.exists() for path in left["live"])
    again = run_doctor(cli)
    assert again["findings"] == []
    assert cli("doctor").code == 0
    assert [r["id"] for r in recalled(cli, "kettle")] == [ID_A]


def test_reindex_removes_them_too(cli: Cli, vault_dir: Path, left: dict[str, Any]) -> None:
    result = cli("reindex")
    assert result.code == 0, result.err
    assert present(vault_dir, left["dead"]) == set()
    assert all(path.exists() for path in left["live"])
    assert [r["id"] for r in recalled(cli, "kettle")] == [ID_A]


def test_a_process_alive_again_keeps_its_files(vault_dir: Path, live_pid: int) -> None:
    """The pid is checked again just before removing: a file found dead is kept if its
    process runs now."""
    path = vault_dir / ".kenomem" / "tmp" / f".x.md.{live_pid}.abcdef.tmp"
    touch(path)
    item = leftovers.Leftover(path.relative_to(vault_dir).as_posix(), live_pid, False)
    assert leftovers.remove(vault_dir, [item]) == []
    assert path.exists()


def test_no_state_folder_no_leftovers(vault_dir: Path) -> None:
    assert not (vault_dir / ".kenomem").exists()
    assert leftovers.find(vault_dir) == []
