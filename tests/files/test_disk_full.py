"""A real small disk that fills up, and folders mounted read-only.

Each test mounts a 4 MB tmpfs and puts a vault on it; filling it leaves no space at all
(or a few pages). A read-only vault is the tmpfs remounted read-only; a read-only
`.kenomem/` is a read-only bind mount of that folder over itself. These need a machine
that lets the tests mount (root, or CAP_SYS_ADMIN); elsewhere they are skipped, and
`test_storage_errors.py` covers the same ground by raising the OS errors.

Root ignores permission bits, so a read-only mount is the only way to refuse it a write.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.conftest import TEMPLATE, Cli, CliResult, set_engine, write

pytestmark = pytest.mark.both_engines

SIZE = "4m"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=False)


@cache
def _cannot_mount() -> str:
    """Why this machine will not let the tests mount a small disk ("" when it will)."""
    import tempfile

    if not shutil.which("mount") or not shutil.which("umount"):
        return "no mount command"
    probe = Path(tempfile.mkdtemp(prefix="kenomem-mount-"))
    try:
        done = _run("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe))
        if done.returncode != 0:
            return f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}"
        _unmount(probe)
        return ""
    finally:
        probe.rmdir()


def _unmount(where: Path) -> None:
    if _run("umount", str(where)).returncode != 0:
        _run("umount", "-l", str(where))  # an open file of this process: let go later


class Disk(NamedTuple):
    mount: Path
    vault: Path

    def fill(self, leave_kb: int = 0) -> None:
        """Take every free byte, then give back `leave_kb`."""
        filler = self.mount / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            block = b"\0" * (1 << 20)
            while True:
                try:
                    if os.write(fd, block) < len(block):
                        block = block[: max(1, len(block) // 2)]
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    if len(block) == 1:
                        break
                    block = block[: len(block) // 2]
        finally:
            os.close(fd)
        if leave_kb:
            os.truncate(filler, max(0, filler.stat().st_size - leave_kb * 1024))

    def free(self) -> None:
        (self.mount / "filler").unlink(missing_ok=True)

    def read_only(self) -> None:
        """The whole vault on a read-only file system."""
        assert _run("mount", "-o", "remount,ro", str(self.mount)).returncode == 0

    def read_only_state(self) -> None:
        """Only the vault's `.kenomem/` read-only: a bind mount of it over itself."""
        state = self.vault / ".kenomem"
        assert _run("mount", "--bind", str(state), str(state)).returncode == 0
        done = _run("mount", "-o", "remount,bind,ro", str(state))
        assert done.returncode == 0, done.stderr

    def memory_files(self) -> set[str]:
        return {
            str(p.relative_to(self.vault))
            for p in self.vault.rglob("*")
            if ".kenomem" not in p.parts
        }

    def leftovers(self) -> list[Path]:
        """Temporary files a failed write left behind, anywhere on the disk (kenomem's
        `.name.pid.hex.tmp`, tantivy's `.tmpXXXXXX`)."""
        return [
            p for p in self.mount.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".tmp")
        ]


@pytest.fixture
def disk(
    cli: Cli, tmp_path: Path, engine_name: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Disk]:
    """A vault, used once, on a small disk of its own; the `cli` fixture runs in it."""
    why = _cannot_mount()
    if why:
        pytest.skip(why)
    mount = tmp_path / "disk"
    mount.mkdir()
    done = _run("mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(mount))
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        vault = mount / "vault"
        shutil.copytree(TEMPLATE, vault)
        if engine_name != "whoosh":
            set_engine(vault, engine_name)
        monkeypatch.setenv("KENOMEM_VAULT", str(vault))
        monkeypatch.setenv("KENOMEM_NO_SERVE", "1")
        found = Disk(mount, vault)
        assert cli("remember", "The build uses make and pytest").code == 0
        yield found
    finally:
        state = mount / "vault" / ".kenomem"
        if os.path.ismount(state):
            _unmount(state)
        _unmount(mount)


def clean_failure(result: CliResult, cause: str) -> None:
    """Exit 1, with the cause named in the error's line (warnings may come before it)."""
    code, out, err = result
    assert code == 1, (out, err)
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {cause}"), err
    assert "unexpected" not in err and "Traceback" not in err and "report it" not in err


def answers(result: CliResult) -> str:
    """The warnings of a command that answered."""
    assert result.code == 0, result.err
    assert "unexpected" not in result.err and "Traceback" not in result.err
    return result.err


# -- a full disk ------------------------------------------------------------------------------


def test_remember_on_a_full_disk_fails_cleanly_and_a_retry_stores_it_once(
    cli: Cli, disk: Disk
) -> None:
    before = disk.memory_files()
    disk.fill()
    result = cli("remember", "The deploy runs on Fridays only")
    clean_failure(result, "disk full")
    assert f"free some space on {disk.mount}" in result.err
    assert disk.memory_files() == before
    assert disk.leftovers() == []
    disk.free()
    again = json.loads(cli("remember", "The deploy runs on Fridays only", "--json").out)
    assert again["action"] == "created"
    assert len(disk.memory_files() - before) == 1


def test_reading_commands_answer_on_a_full_disk(cli: Cli, disk: Disk) -> None:
    memory = json.loads(cli("list", "--json").out)["memories"][0]
    write(disk.vault, "semantic/pipeline.md", "A note about the build pipeline\n")
    disk.fill()
    for args in (
        ("recall", "build", "--no-touch"),
        ("list",),
        ("show", memory["id"]),
        ("context", "build", "--no-touch"),
        ("stats",),
    ):
        err = answers(cli(*args))
        assert "the index could not be updated" in err and "disk full" in err, (args, err)
    # doctor answers, no crash: the new note is one the next change scan indexes (no
    # problem), and a note without frontmatter (information), so exit 0
    doctor = cli("doctor")
    assert doctor.code == 0 and "plain-note" in doctor.out, doctor
    assert "semantic/pipeline.md" in doctor.out and "out of step" not in doctor.out
    assert "unexpected" not in doctor.err and "Traceback" not in doctor.err
    assert "make and pytest" in cli("recall", "build", "--no-touch").out
    # recall that touches: the answer, and one warning that the touch was not written
    result = cli("recall", "build")
    assert "make and pytest" in result.out
    assert "was not recorded" in answers(result)
    assert disk.leftovers() == []
    disk.free()
    result = cli("recall", "pipeline", "--no-touch")
    assert "pipeline" in result.out and "could not" not in answers(result)


def test_log_on_a_full_disk_leaves_the_day_as_it_was(cli: Cli, disk: Disk) -> None:
    assert cli("log", "the first entry of the day").code == 0
    day = next((disk.vault / "buffer").glob("*.md"))
    before = day.read_bytes()
    disk.fill()
    # Longer than what is left of the file's last page: a write the disk cuts short.
    clean_failure(cli("log", "a long entry " * 800), "disk full")
    assert day.read_bytes() == before
    disk.free()
    assert cli("log", "the last entry").code == 0
    assert day.read_text("utf-8").startswith(before.decode())
    assert day.read_text("utf-8").endswith("the last entry\n")


def test_other_writers_on_a_full_disk_change_nothing(cli: Cli, disk: Disk) -> None:
    memory = json.loads(cli("list", "--json").out)["memories"][0]
    before = disk.memory_files()
    texts = {p: (disk.vault / p).read_bytes() for p in before if p.endswith(".md")}
    disk.fill()
    clean_failure(cli("forget", memory["id"]), "disk full")
    clean_failure(cli("working", "set", "--session", "s1", "Task: fix the build"), "disk full")
    clean_failure(
        cli("remember", "The build runs on Mondays", "--supersedes", memory["id"]), "disk full"
    )
    assert disk.memory_files() == before
    assert {p: (disk.vault / p).read_bytes() for p in texts} == texts
    assert disk.leftovers() == []


@pytest.mark.slow
def test_whatever_a_remember_reports_on_a_nearly_full_disk_is_what_happened(
    cli: Cli, disk: Disk
) -> None:
    """Space for the file but perhaps not for the index: success (with a warning) means
    the memory is kept and found once there is room; failure means nothing was written.
    A retry then reinforces only a memory that was reported remembered."""
    subjects = ["parser", "lexer", "kettle", "garden", "violin", "harbour", "glacier", "tram"]
    for subject, leave in zip(subjects, range(4, 68, 8), strict=True):
        text = f"The {subject} was mentioned on day {leave} of the trip"
        before = disk.memory_files()
        disk.fill(leave)
        result = cli("remember", text, "--json")
        disk.free()
        added = disk.memory_files() - before
        assert disk.leftovers() == []
        if result.code == 0:
            assert json.loads(result.out)["action"] == "created"
            assert len(added) == 1, (leave, result)
            found = json.loads(cli("recall", subject, "--no-touch", "--json").out)
            assert [r["id"] for r in found["results"]][:1] == [json.loads(result.out)["id"]]
            retry = json.loads(cli("remember", text, "--json").out)
            assert retry["action"] == "reinforced"
        else:
            clean_failure(result, "disk full")
            assert added == set(), leave
            retry = json.loads(cli("remember", text, "--json").out)
            assert retry["action"] == "created"


# -- read-only folders ------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["vault", "state"])
def test_a_read_only_vault_or_state_folder_answers_and_refuses_writes(
    cli: Cli, disk: Disk, which: str
) -> None:
    memory = json.loads(cli("list", "--json").out)["memories"][0]
    if which == "vault":
        disk.read_only()
    else:
        disk.read_only_state()
        write(disk.vault, "semantic/pipeline.md", "A note about the build pipeline\n")
    before = disk.memory_files()
    for args in (("recall", "build", "--no-touch"), ("list",), ("show", memory["id"])):
        err = answers(cli(*args))
        if which == "state":
            assert "the index could not be updated" in err and "read-only" in err
    assert "make and pytest" in cli("recall", "build", "--no-touch").out
    result = cli("recall", "build")
    assert "make and pytest" in result.out and "was not recorded" in answers(result)
    for args in (
        ("remember", "The deploy runs on Fridays"),
        ("log", "a line"),
        ("forget", memory["id"]),
    ):
        result = cli(*args)
        clean_failure(result, "read-only file system")
        assert "remount" in result.err
    assert disk.memory_files() == before
