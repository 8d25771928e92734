"""Faults: a process killed (SIGKILL) at points spread over every long command, a full disk,
a read-only `.kenomem/` or vault (docs/security.md).

After a kill the next run of the same command completes, `doctor` finds nothing, nothing a
dead process left is still there, and every memory is present exactly once, as one
uninterrupted run leaves it. On a full disk or a read-only folder a writer fails with a
message that names the cause and leaves nothing half-written; readers still answer.

The kill points: the killed process counts its calls that change the file system
(`os.replace`, `rename`, `link`, `unlink`, `mkdir`, `rmdir`, `write`, `fsync`, `ftruncate`)
and kills itself just before the chosen one. A first run counts them.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.adversarial.helpers import (
    buffer_days,
    clean_run,
    doctor_after_a_kill,
    doctor_clean,
    each_memory_once,
    env_for,
    hand_made,
    kenomem,
    memory_files,
    no_leftovers,
    turns,
)
from tests.adversarial.hostile import clean_exit, tree
from tests.conftest import TEMPLATE
from tests.forget.helpers import check_nothing_lost, crowded

KILLER = textwrap.dedent(
    """
    import os, signal, sys

    target, counted, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    me = os.getpid()
    seen = [0]

    def dying(real):
        def wrapper(*a, **k):
            if os.getpid() == me:
                seen[0] += 1
                if seen[0] == target:
                    os.kill(me, signal.SIGKILL)
            return real(*a, **k)
        return wrapper

    for name in ("replace", "rename", "link", "unlink", "mkdir", "rmdir", "write", "fsync",
                 "ftruncate"):
        setattr(os, name, dying(getattr(os, name)))
    from kenomem.cli.entry import main
    try:
        main(args)
    finally:
        with open(counted, "w") as out:
            out.write(str(seen[0]))
    """
)
TITLE = re.compile(rb"^title: *(.*?)\s*$", re.MULTILINE)


def killed_at(vault: Path, tmp: Path, point: int, *args: str) -> tuple[int, int]:
    """Run `kenomem args` killing it before its `point`-th change (0: never); (exit code,
    changes counted)."""
    script = tmp / "killer.py"
    script.write_text(KILLER, encoding="utf-8")
    counted = tmp / "counted"
    counted.unlink(missing_ok=True)
    process = subprocess.Popen(
        [sys.executable, str(script), str(point), str(counted), *args, "--vault", str(vault)],
        env=env_for(vault),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    _out, err = process.communicate(timeout=300)
    try:
        os.killpg(process.pid, signal.SIGKILL)  # workers it forked, if any
    except ProcessLookupError:
        pass
    changes = int(counted.read_text()) if counted.exists() else -1
    if point == 0:
        assert process.returncode == 0, err.decode()[-2000:]
    return process.returncode, changes


def points(total: int, how_many: int = 4) -> list[int]:
    """Kill points spread over a run of `total` changes: its first, its last, and between."""
    if total <= how_many:
        return list(range(1, total + 1))
    step = total / (how_many - 1)
    return sorted({1, total, *(round(step * k) for k in range(1, how_many - 1))})


def titles(vault: Path) -> Counter[tuple[str, bytes]]:
    out: Counter[tuple[str, bytes]] = Counter()
    for rel, data in memory_files(vault).items():
        m = TITLE.search(data)
        out[(rel.split("/")[0], m.group(1) if m else b"")] += 1
    return out


# Each long command: how to fill its vault, what one run does, and what to compare.
Fill = Callable[[Path, Path], None]


def fill_reindex(vault: Path, tmp: Path) -> None:
    hand_made(vault, 150)


def fill_import(vault: Path, tmp: Path) -> None:
    (tmp / "chat.jsonl").write_text(turns(120), encoding="utf-8")


def fill_consolidate(vault: Path, tmp: Path) -> None:
    buffer_days(vault, days=4, per_day=8)


def fill_prune(vault: Path, tmp: Path) -> None:
    crowded(vault, now=datetime.now(UTC))


def fill_reset(vault: Path, tmp: Path) -> None:
    hand_made(vault, 20, "episodic")
    hand_made(vault, 10, "semantic", first=20)
    buffer_days(vault, days=2, per_day=3)


COMMANDS: dict[str, tuple[Fill, tuple[str, ...]]] = {
    "reindex": (fill_reindex, ("reindex",)),
    "import": (fill_import, ("import", "--json", "{tmp}/chat.jsonl")),
    "consolidate": (fill_consolidate, ("consolidate", "--json")),
    "prune": (fill_prune, ("prune", "--json")),
    "reset": (fill_reset, ("reset", "--memory", "--yes", "--json")),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", COMMANDS)
def test_a_command_killed_anywhere_is_finished_by_the_next_run(tmp_path: Path, name: str) -> None:
    fill, raw = COMMANDS[name]
    base = tmp_path / "base"
    shutil.copytree(TEMPLATE, base)
    fill(base, tmp_path)
    clean_run(kenomem(base, "list", "--json"))  # the index built, as a vault in use has it
    args = tuple(a.replace("{tmp}", str(tmp_path)) for a in raw)
    each_memory_once(base)

    reference = tmp_path / "reference"
    shutil.copytree(base, reference)
    _code, total = killed_at(reference, tmp_path, 0, *args)
    assert total > 0
    doctor_clean(reference)

    for point in points(total):
        vault = tmp_path / f"killed-{point}"
        shutil.copytree(base, vault)
        code, seen = killed_at(vault, tmp_path, point, *args)
        # A run's count of changes can vary by a few (the index engine's merges), so a run
        # may end before the reference run's last change: what it left is checked alike.
        ended_first = code == 0 and point == total and seen < total
        assert code == -signal.SIGKILL or ended_first, f"not killed at change {point} of {total}"
        each_memory_once(vault)
        rerun = kenomem(vault, *args)
        clean_run(rerun, (name, point))
        ids = each_memory_once(vault)
        doctor_after_a_kill(vault)
        no_leftovers(vault)
        if name in ("reindex", "reset"):  # the files are the reference's, byte for byte
            assert memory_files(vault) == memory_files(reference), (name, point)
        else:  # the same memories, made at another second
            assert titles(vault) == titles(reference), (name, point)
        if name == "import":
            assert set(ids) == set(each_memory_once(reference))


@pytest.mark.slow
def test_a_killed_prune_loses_nothing(tmp_path: Path) -> None:
    """The fine-grained guarantee of test_prune_crash, at generic kill points."""
    vault = tmp_path / "v"
    shutil.copytree(TEMPLATE, vault)
    made = crowded(vault, now=datetime.now(UTC))
    count = tmp_path / "count"
    shutil.copytree(vault, count)
    _code, total = killed_at(count, tmp_path, 0, "prune")
    for point in points(total, 3):
        trial = tmp_path / f"p{point}"
        shutil.copytree(vault, trial)
        killed_at(trial, tmp_path, point, "prune")
        check_nothing_lost(trial, made)
        clean_run(kenomem(trial, "prune"))
        check_nothing_lost(trial, made)


# -- a full disk, a read-only folder ---------------------------------------------------------


def mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True, check=False).returncode == 0


def umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MB tmpfs: a disk that fills up (root only; skipped where mounting is refused)."""
    where = tmp_path / "disk"
    where.mkdir()
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("mounting a small disk needs root on Linux")
    if not mount("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)):
        pytest.skip("this machine refuses to mount a tmpfs")
    try:
        yield where
    finally:
        umount(where)


def fill_up(disk: Path) -> Path:
    ballast = disk / "ballast"
    # Unbuffered: a buffered file would keep what the disk refused and fail again when
    # closed, depending on how the free space divides by the block written.
    with open(ballast, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
        except OSError:
            pass
    try:  # the last crumbs
        with open(ballast, "ab", buffering=0) as handle:
            while True:
                handle.write(b"\0" * 512)
    except OSError:
        pass
    return ballast


READERS = (
    ("recall", "--json", "--no-touch", "harbour"),
    ("list", "--json"),
    ("show", "--json", "mem_20260101_000001_0001"),
    ("context", "--no-touch", "harbour"),
    ("stats", "--json"),
)
WRITERS = (
    ("remember", "--json", "the lighthouse keeper retires in June"),
    ("log", "--json", "the lighthouse keeper retires in June"),
    ("working", "set", "--session", "s9", "--", "Task: lighthouse"),
    ("forget", "--json", "mem_20260101_000002_0002"),
)


def vault_on(disk: Path) -> Path:
    vault = disk / "v"
    shutil.copytree(TEMPLATE, vault)
    hand_made(vault, 5)
    clean_run(kenomem(vault, "list", "--json"))
    return vault


def readers_answer(vault: Path) -> None:
    for args in READERS:
        done = kenomem(vault, *args)
        clean_exit(done.returncode, done.stdout, done.stderr, args)
        assert done.returncode == 0, (args, done.stderr)


def writers_fail_cleanly(vault: Path, cause: tuple[str, ...]) -> None:
    for args in WRITERS:
        before = tree(vault)
        done = kenomem(vault, *args)
        clean_exit(done.returncode, done.stdout, done.stderr, args)
        assert done.returncode == 1, (args, done.stderr)
        assert any(word in done.stderr.lower() for word in cause), (args, done.stderr)
        assert tree(vault) == before, f"{args[0]} left a half-done write"


@pytest.mark.slow
def test_a_full_disk_gives_true_results(small_disk: Path) -> None:
    vault = vault_on(small_disk)
    ballast = fill_up(small_disk)
    readers_answer(vault)
    done = kenomem(vault, "recall", "--json", "harbour")  # a touch that cannot be written
    clean_exit(done.returncode, done.stdout, done.stderr, "recall")
    assert done.returncode == 0, done.stderr
    writers_fail_cleanly(vault, ("disk", "space"))
    no_leftovers(vault)
    ballast.unlink()
    again = clean_run(kenomem(vault, "remember", "--json", "the lighthouse keeper retires in June"))
    assert again["action"] == "created", "a retry found a memory the full disk never stored"
    each_memory_once(vault)
    doctor_clean(vault)


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Callable[[Path], None]]:
    """Makes a folder read-only with a read-only bind mount (root ignores permissions)."""
    mounted: list[Path] = []
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root on Linux")

    def make(path: Path) -> None:
        if not mount("--bind", str(path), str(path)):
            pytest.skip("this machine refuses bind mounts")
        mounted.append(path)
        if not mount("-o", "remount,bind,ro", str(path)):
            pytest.skip("this machine refuses to remount read-only")

    try:
        yield make
    finally:
        for path in reversed(mounted):
            umount(path)


@pytest.mark.slow
@pytest.mark.parametrize("which", [".kenomem", "vault"])
def test_a_read_only_folder_gives_true_results(
    tmp_path: Path, read_only: Callable[[Path], None], which: str
) -> None:
    vault = vault_on(tmp_path)
    read_only(vault / ".kenomem" if which == ".kenomem" else vault)
    readers_answer(vault)
    writers_fail_cleanly(vault, ("read-only", "read only"))
