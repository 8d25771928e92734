"""The watcher's heartbeat and the saved state live in `.kenomem/`, and no file of theirs
is ever opened through a symlink: a link there is replaced, refused or read as nothing,
never written through (`index/heartbeat.py`, `index/state.py`)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from kenomem.errors import UnsafePath
from kenomem.index import heartbeat
from kenomem.index import state as state_mod
from kenomem.index.heartbeat import NAME
from kenomem.index.state import JOURNAL_NAME, META_NAME, FileRecord, State

PRECIOUS = b"a file of the user's, outside the vault\n"


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    target = tmp_path / "vault" / ".kenomem"
    target.mkdir(parents=True, mode=0o700)
    return target


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "precious.txt"
    path.write_bytes(PRECIOUS)
    return path


def test_a_beat_never_writes_through_a_link_at_its_temporary_name(
    state_dir: Path, victim: Path
) -> None:
    # The name a beat of this process writes first, planted as a link beforehand.
    (state_dir / f".{NAME}.{os.getpid()}.tmp").symlink_to(victim)
    heartbeat.write(state_dir, 0)
    assert victim.read_bytes() == PRECIOUS
    beat = state_dir / NAME
    assert beat.is_file() and not beat.is_symlink()
    assert heartbeat.read(state_dir) is not None
    assert sorted(p.name for p in state_dir.iterdir()) == [NAME]


def test_a_beat_replaces_a_link_at_its_own_name(state_dir: Path, victim: Path) -> None:
    (state_dir / NAME).symlink_to(victim)
    heartbeat.write(state_dir, 0)
    assert victim.read_bytes() == PRECIOUS and not (state_dir / NAME).is_symlink()


def test_a_heartbeat_that_is_a_link_is_not_trusted(state_dir: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "beat"
    elsewhere.write_text(f"{os.getpid()} {time.time():.3f} 0\n")
    (state_dir / NAME).symlink_to(elsewhere)
    assert heartbeat.read(state_dir) is None
    assert not heartbeat.trusted(state_dir)
    heartbeat.clear(state_dir)  # the link goes, what it points to stays
    assert not (state_dir / NAME).is_symlink() and elsewhere.exists()


def test_a_beat_in_a_state_folder_that_is_a_link_writes_nothing(
    tmp_path: Path, victim: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked = tmp_path / "vault" / ".kenomem"
    linked.parent.mkdir()
    linked.symlink_to(elsewhere)
    heartbeat.write(linked, 0)
    assert list(elsewhere.iterdir()) == []


def saved(state_dir: Path) -> State:
    state = State(1, "whoosh", None)
    state.put("semantic/a.md", FileRecord(10, 20, "d" * 32, "mem_20260101_000000_0001"))
    state_mod.save(state_dir, state)
    return state


def test_saved_state_read_through_a_link_is_no_state(state_dir: Path, tmp_path: Path) -> None:
    saved(state_dir)
    meta = state_dir / META_NAME
    elsewhere = tmp_path / "meta.bin"
    meta.rename(elsewhere)
    meta.symlink_to(elsewhere)  # what another program put there: not kenomem's own
    assert state_mod.load(state_dir) is None  # the index is rebuilt instead
    saved(state_dir)  # and the save replaces the link with a file of its own
    assert not meta.is_symlink() and state_mod.load(state_dir) is not None


def test_the_journal_is_never_appended_through_a_link(state_dir: Path, victim: Path) -> None:
    saved(state_dir)
    (state_dir / JOURNAL_NAME).symlink_to(victim)
    with pytest.raises(UnsafePath, match="journal is a symlink"):
        state_mod.append_journal(state_dir, [["a", "semantic/a.md", 1.0, 1]])
    assert victim.read_bytes() == PRECIOUS
    loaded = state_mod.load(state_dir)  # a journal that is a link is not read either
    assert loaded is not None and loaded.journal_lines == 0
