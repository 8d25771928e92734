"""Folders held by descriptor (`files/beneath.py`) and the writes made in them: what was
checked is what is written, whatever happens to the names meanwhile; `.kenomem/` must be
a real folder of the user's own (`paths.state_dir`, `paths.private_dir`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kenomem.errors import UnsafePath
from kenomem.files import atomic, beneath, buffer
from kenomem.files.lock import VaultLock, held_elsewhere
from kenomem.files.paths import (
    OUTSIDE,
    move_inside,
    private_dir,
    read_inside,
    read_private,
    remove_inside,
    state_dir,
    write_private,
)

OTHER_UID = 65534  # nobody: played with chown, as root
as_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a folder away takes root"
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / "semantic").mkdir(parents=True)
    (vault / "semantic" / "a.md").write_text("inside\n", encoding="utf-8")
    return vault


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "a.md").write_text("outside\n", encoding="utf-8")
    return folder


def files_in(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


# -- the walk -------------------------------------------------------------------------------


def test_a_folder_is_walked_and_made(root: Path) -> None:
    with beneath.folder(root, "episodic/2026-11", create=True) as held:
        assert held.made == ["episodic/2026-11", "episodic"]
        assert os.path.samestat(os.fstat(held.fd), os.stat(root / "episodic" / "2026-11"))
    with pytest.raises(FileNotFoundError) as caught:
        beneath.folder(root, "procedural/x")
    assert caught.value.filename == str(root / "procedural")


@pytest.mark.parametrize("rel", ["../vault", "semantic/../..", "/etc", "semantic//x"])
def test_a_way_out_by_name_is_refused(root: Path, rel: str) -> None:
    with pytest.raises(UnsafePath, match=OUTSIDE):
        beneath.folder(root, rel)


def test_a_link_out_is_refused_and_a_link_inside_followed(root: Path, outside: Path) -> None:
    (root / "procedural").symlink_to(outside)
    with pytest.raises(UnsafePath, match=f"procedural: {OUTSIDE}"):
        beneath.folder(root, "procedural", create=True)
    (root / "notes").symlink_to(root / "semantic")
    with beneath.folder(root, "notes") as held:
        assert os.path.samestat(os.fstat(held.fd), os.stat(root / "semantic"))
    with pytest.raises(UnsafePath, match="changed into a symlink"):
        beneath.folder(root, "notes", follow=False)  # a link where none may be


def test_a_file_in_the_way_is_not_a_folder(root: Path) -> None:
    (root / "working").write_text("a file\n", encoding="utf-8")
    with pytest.raises(UnsafePath, match="is not a folder"):
        beneath.folder(root, "working/x", create=True)


def test_a_held_folder_swapped_for_a_link_still_gets_the_write(root: Path, outside: Path) -> None:
    """The time-of-check, time-of-use hole, closed: the folder was checked when it was
    opened, and the write goes there, not where its name points by then."""
    before = files_in(outside)
    with beneath.folder(root, "semantic") as held:
        (root / "semantic").rename(root / ".moved")
        (root / "semantic").symlink_to(outside)
        atomic.create_bytes(root / "semantic" / "new.md", b"new\n", folder=held)
        atomic.write_bytes(root / "semantic" / "a.md", b"changed\n", folder=held)
        atomic.append_bytes(root / "semantic" / "a.md", b"more\n", folder=held)
    assert files_in(outside) == before
    assert files_in(root / ".moved") == {"a.md": b"changed\nmore\n", "new.md": b"new\n"}


def test_a_file_is_read_through_a_link_only_inside(root: Path, outside: Path) -> None:
    (root / "semantic" / "b.md").symlink_to(root / "semantic" / "a.md")
    (root / "semantic" / "c.md").symlink_to(outside / "a.md")
    assert read_inside(root, "semantic/b.md") == b"inside\n"
    with pytest.raises(UnsafePath, match=OUTSIDE):
        read_inside(root, "semantic/c.md")
    with pytest.raises(UnsafePath, match="is a symlink"):
        beneath.open_file(root, "semantic/b.md", os.O_WRONLY | os.O_APPEND)


def test_moves_and_removals_never_go_through_a_link(root: Path, outside: Path) -> None:
    (root / "archive").symlink_to(outside)
    with pytest.raises(UnsafePath, match=OUTSIDE):
        move_inside(root, "semantic/a.md", "archive/a.md")
    (root / "semantic" / "b.md").symlink_to(outside / "a.md")
    with pytest.raises(UnsafePath, match="is a symlink"):
        move_inside(root, "semantic/a.md", "semantic/b.md")  # onto a link
    with pytest.raises(UnsafePath, match=OUTSIDE):
        remove_inside(root, "archive/a.md")
    remove_inside(root, "semantic/b.md")  # the link itself goes
    assert files_in(outside) == {"a.md": b"outside\n"}
    assert (root / "semantic" / "a.md").read_bytes() == b"inside\n"


def test_a_buffer_day_that_is_a_link_is_refused(root: Path, outside: Path) -> None:
    (root / "buffer").mkdir()
    (root / "buffer" / "2026-11-03.md").symlink_to(outside / "a.md")
    with pytest.raises(UnsafePath, match="is a symlink"):
        buffer.append(root, "buffer/2026-11-03.md", b"\n## 10:00:00 x\nentry\n")
    assert files_in(outside) == {"a.md": b"outside\n"}


# -- .kenomem/ ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_a_state_folder_that_is_not_a_folder_is_refused(
    root: Path, outside: Path, kind: str
) -> None:
    state = root / ".kenomem"
    if kind == "file":
        state.write_bytes(b"brought by a sync\n")
    else:
        state.symlink_to(outside)
    for use in (state_dir, lambda r: private_dir(r / ".kenomem")):
        with pytest.raises(UnsafePath, match="not a folder of the vault's own") as caught:
            use(root)
        assert caught.value.hint == f"remove it (rm {state}): all it holds is rebuilt"
    with pytest.raises(UnsafePath), VaultLock(state):
        pass
    assert files_in(outside) == {"a.md": b"outside\n"}


@as_root
def test_another_users_state_folder_is_refused_and_left_alone(root: Path) -> None:
    state = root / ".kenomem"
    state.mkdir()
    os.chmod(state, 0o775)
    os.chown(state, OTHER_UID, OTHER_UID)
    for use in (state_dir, lambda r: private_dir(r / ".kenomem")):
        with pytest.raises(UnsafePath, match=f"belongs to another user .uid {OTHER_UID}."):
            use(root)
    with pytest.raises(UnsafePath), VaultLock(state):
        pass
    assert os.stat(state).st_mode & 0o777 == 0o775 and list(state.iterdir()) == []


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_the_state_folder_and_its_folders_are_the_users_alone(root: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        write_private(root / ".kenomem", "vectors/x.bin", b"x")
    finally:
        os.umask(old)
    for folder in (root / ".kenomem", root / ".kenomem" / "vectors"):
        assert os.stat(folder).st_mode & 0o777 == 0o700
    os.chmod(root / ".kenomem", 0o777)
    assert read_private(root / ".kenomem", "vectors/x.bin") == b"x"  # and closed again
    assert os.stat(root / ".kenomem").st_mode & 0o777 == 0o700


def test_a_file_under_the_state_folder_is_never_opened_through_a_link(
    root: Path, outside: Path
) -> None:
    state = private_dir(root / ".kenomem")
    (state / "pending.json").symlink_to(outside / "a.md")
    with pytest.raises(UnsafePath, match=r"pending\.json is a symlink") as caught:
        read_private(state, "pending.json")
    assert caught.value.hint == f"remove it (rm {state / 'pending.json'}): kenomem makes it again"
    write_private(state, "pending.json", b"{}")  # the link is replaced, not followed
    assert not (state / "pending.json").is_symlink()
    assert files_in(outside) == {"a.md": b"outside\n"}


# -- the lock -------------------------------------------------------------------------------


def test_a_lock_that_is_a_symlink_is_never_truncated(root: Path, outside: Path) -> None:
    state = private_dir(root / ".kenomem")
    (state / "lock").symlink_to(outside / "a.md")
    with pytest.raises(UnsafePath, match="lock is a symlink") as caught, VaultLock(state):
        pass
    assert f"rm {state / 'lock'}" in (caught.value.hint or "")
    with pytest.raises(UnsafePath):
        held_elsewhere(state)
    assert files_in(outside) == {"a.md": b"outside\n"}


def test_a_lock_that_is_a_pipe_is_refused_not_waited_on(root: Path) -> None:
    state = private_dir(root / ".kenomem")
    os.mkfifo(state / "lock")
    with pytest.raises(UnsafePath, match="not a regular file"), VaultLock(state, timeout=1):
        pass


def test_the_lock_is_made_as_before(root: Path) -> None:
    with VaultLock(root / ".kenomem") as lock:
        assert lock.fd is not None
        assert (root / ".kenomem" / "lock").read_text() == str(os.getpid())
    assert not held_elsewhere(root / ".kenomem")
    assert os.stat(root / ".kenomem").st_mode & 0o777 == 0o700
