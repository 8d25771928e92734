"""The watcher's heartbeat: what other commands trust, and when they stop trusting it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenomem.index import heartbeat
from kenomem.index.heartbeat import FRESH_SECONDS, NAME


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    target = tmp_path / "vault" / ".kenomem"
    target.mkdir(parents=True)
    return target


def dead_pid() -> int:
    """The id of a process that has exited and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    assert not heartbeat.alive(child.pid)
    return child.pid


def put(state_dir: Path, pid: int, beat: float, pending: int = 0) -> None:
    (state_dir / NAME).write_text(f"{pid} {beat:.3f} {pending}\n")


def test_write_then_read(state_dir: Path) -> None:
    before = time.time()
    heartbeat.write(state_dir, 3)
    after = time.time()
    beat = heartbeat.read(state_dir)
    assert beat is not None
    assert beat.pid == os.getpid()
    assert beat.pending == 3
    assert before - 0.001 <= beat.time <= after + 0.001


@given(pending=st.integers(min_value=0, max_value=10**9))
def test_pending_round_trips(tmp_path_factory: pytest.TempPathFactory, pending: int) -> None:
    state_dir = tmp_path_factory.mktemp("state")
    heartbeat.write(state_dir, pending)
    beat = heartbeat.read(state_dir)
    assert beat is not None
    assert beat.pending == pending


def test_a_beat_replaces_the_previous_one_and_leaves_no_temporary_file(state_dir: Path) -> None:
    heartbeat.write(state_dir, 5)
    heartbeat.write(state_dir, 0)
    beat = heartbeat.read(state_dir)
    assert beat is not None
    assert beat.pending == 0
    assert sorted(p.name for p in state_dir.iterdir()) == [NAME]


def test_clear(state_dir: Path) -> None:
    heartbeat.write(state_dir, 0)
    heartbeat.clear(state_dir)
    assert heartbeat.read(state_dir) is None
    assert not (state_dir / NAME).exists()
    heartbeat.clear(state_dir)  # clearing twice is fine
    assert not heartbeat.trusted(state_dir)


def test_no_heartbeat_is_not_trusted(state_dir: Path) -> None:
    assert heartbeat.read(state_dir) is None
    assert not heartbeat.trusted(state_dir)


@pytest.mark.parametrize("text", ["", "garbage", "123", "1 2", "a b c", "1 2 3 4", "\x00\x01"])
def test_a_damaged_heartbeat_is_not_trusted(state_dir: Path, text: str) -> None:
    (state_dir / NAME).write_text(text)
    assert heartbeat.read(state_dir) is None
    assert not heartbeat.trusted(state_dir)


def watcher_pid() -> int:
    """A live process other than this one, standing for a watcher running elsewhere."""
    pid = os.getppid()
    assert pid != os.getpid()
    assert heartbeat.alive(pid)
    return pid


def as_from_watcher(state_dir: Path) -> None:
    """Make the beat this process wrote look written by the watcher process, as a
    command sees it (the time and pending count are left exactly as written)."""
    path = state_dir / NAME
    _pid, rest = path.read_text().split(" ", 1)
    path.write_text(f"{watcher_pid()} {rest}")


def test_a_live_idle_recent_watcher_is_trusted(state_dir: Path) -> None:
    heartbeat.write(state_dir, 0)
    as_from_watcher(state_dir)
    assert heartbeat.trusted(state_dir, now=time.time() + 0.01)
    assert heartbeat.trusted(state_dir, now=time.time() + FRESH_SECONDS / 2)


def test_a_beat_is_trusted_the_moment_it_is_written(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The beat's time is written to the millisecond: rounding must not put it in the
    future, where `trusted` takes it for a clock gone wrong."""
    clock = [1_800_000_000.0006]
    monkeypatch.setattr(heartbeat.time, "time", lambda: clock[0])
    heartbeat.write(state_dir, 0)
    as_from_watcher(state_dir)
    clock[0] += 0.0001  # a command reads it a tenth of a millisecond later
    assert heartbeat.trusted(state_dir)


def test_pending_changes_are_not_trusted(state_dir: Path) -> None:
    put(state_dir, watcher_pid(), time.time(), pending=1)
    assert not heartbeat.trusted(state_dir, now=time.time() + 0.01)
    put(state_dir, watcher_pid(), time.time(), pending=0)
    assert heartbeat.trusted(state_dir, now=time.time() + 0.01)


def test_a_beat_left_by_a_dead_process_is_not_trusted(state_dir: Path) -> None:
    now = time.time()
    put(state_dir, dead_pid(), now)
    beat = heartbeat.read(state_dir)
    assert beat is not None
    assert beat.pending == 0
    assert not heartbeat.trusted(state_dir, now=now + 0.01)


def test_an_old_beat_is_not_trusted(state_dir: Path) -> None:
    put(state_dir, watcher_pid(), time.time() - FRESH_SECONDS - 5)
    assert not heartbeat.trusted(state_dir)


def test_freshness_is_judged_at_the_given_time(state_dir: Path) -> None:
    put(state_dir, watcher_pid(), 1_800_000_000.0)
    assert heartbeat.trusted(state_dir, now=1_800_000_000.0)
    assert heartbeat.trusted(state_dir, now=1_800_000_000.0 + FRESH_SECONDS / 2)
    assert not heartbeat.trusted(state_dir, now=1_800_000_000.0 + FRESH_SECONDS + 0.5)
    assert not heartbeat.trusted(state_dir, now=1_800_000_000.0 + 3600)
    assert not heartbeat.trusted(state_dir)  # judged now, the beat is years old


def test_a_beat_from_the_future_is_not_trusted(state_dir: Path) -> None:
    """A clock set back (or a beat copied from another machine) proves nothing."""
    put(state_dir, watcher_pid(), time.time() + 3600)
    assert not heartbeat.trusted(state_dir)


def test_write_never_creates_missing_folders(tmp_path: Path) -> None:
    vault = tmp_path / "gone"
    heartbeat.write(vault / ".kenomem", 0)
    assert not vault.exists()
    assert heartbeat.read(vault / ".kenomem") is None
    assert not heartbeat.trusted(vault / ".kenomem")

    vault.mkdir()  # the vault without its state folder
    heartbeat.write(vault / ".kenomem", 0)
    assert list(vault.iterdir()) == []


def test_alive() -> None:
    assert heartbeat.alive(os.getpid())
    assert not heartbeat.alive(dead_pid())
