"""A disk that refuses (full, read-only, not allowed), without a real one: the OS error
is raised through the functions kenomem calls, so these run on any machine.
`test_disk_full.py` does the same on a real small disk where the machine allows mounts.

What must hold: the error names the cause and what to do, never "unexpected"; a write
either completes or leaves nothing; reading commands answer, with a warning.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kenomem.errors import (
    DiskFull,
    KenomemError,
    NoPermission,
    ReadOnly,
    StorageError,
    cannot_write,
    storage_error,
)
from kenomem.files import atomic, store
from kenomem.files.lock import VaultLock
from kenomem.index import heartbeat
from kenomem.index import state as state_mod
from kenomem.vault.core import CoreVault
from tests.conftest import Cli, write

ENOSPC = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def refuse(code: int = errno.ENOSPC) -> Callable[..., Any]:
    def raising(*args: Any, **kwargs: Any) -> Any:
        raise OSError(code, os.strerror(code))

    return raising


def files_under(root: Path) -> set[str]:
    """The vault's files and folders, but for what is derived (under .kenomem)."""
    return {str(p.relative_to(root)) for p in root.rglob("*") if ".kenomem" not in p.parts}


def no_temporary_files(root: Path) -> bool:
    return not [p for p in root.rglob("*") if p.name.endswith(".tmp")]


# -- the mapping ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "kind", "says", "advice"),
    [
        (errno.ENOSPC, DiskFull, "disk full", "free some space on"),
        (errno.EDQUOT, DiskFull, "disk quota exceeded", "quota"),
        (errno.EROFS, ReadOnly, "read-only file system", "remount"),
        (errno.EACCES, NoPermission, "permission denied on", "owner"),
        (errno.EPERM, NoPermission, "permission denied on", "owner"),
        (errno.EFBIG, StorageError, "file too large", "ulimit -f"),
        (errno.EMFILE, StorageError, "too many open files", "ulimit -n"),
        (errno.ENFILE, StorageError, "too many open files", "ulimit -n"),
        (errno.EIO, StorageError, "input/output error", "check the disk"),
    ],
)
def test_each_os_error_of_a_disk_becomes_a_named_error(
    tmp_path: Path, code: int, kind: type[StorageError], says: str, advice: str
) -> None:
    where = tmp_path / "semantic" / "a.md"
    error = storage_error(OSError(code, os.strerror(code), str(where)))
    assert isinstance(error, kind) and isinstance(error, KenomemError)
    assert error.exit_code == 1
    assert error.message.startswith(says)
    assert str(where) in error.message
    assert error.hint is not None and advice in error.hint
    assert "report" not in error.message + error.hint


def test_the_place_is_named_when_the_error_does_not_name_it(tmp_path: Path) -> None:
    error = storage_error(ENOSPC, tmp_path / "x")
    assert error is not None and str(tmp_path / "x") in error.message
    assert "free some space on /" in (error.hint or "")  # the mount point holding it
    bare = storage_error(ENOSPC)
    assert bare is not None and bare.message.startswith("disk full")


@pytest.mark.parametrize(
    "exc",
    [
        FileNotFoundError(errno.ENOENT, "gone"),
        OSError(errno.EINVAL, "bad"),
        ValueError("not an OSError"),
        OSError("no errno"),
    ],
)
def test_other_errors_are_not_named_as_a_disk_s(exc: BaseException) -> None:
    assert storage_error(exc) is None
    assert not cannot_write(exc)


def test_only_a_refused_write_lets_a_reader_go_on() -> None:
    for code in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM):
        assert cannot_write(OSError(code, "x"))
    for code in (errno.EIO, errno.EMFILE, errno.ENOENT):
        assert not cannot_write(OSError(code, "x"))


# -- the doors: command line, Python API, MCP ----------------------------------------------


def test_the_command_line_names_a_full_disk(
    cli: Cli, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("list").code == 0
    before = files_under(vault_dir)
    with monkeypatch.context() as fault:
        fault.setattr(os, "write", refuse())
        result = cli("remember", "The deploy runs on Fridays")
    assert result.code == 1
    assert result.err.startswith("error: disk full: no space left on")
    assert "semantic/the-deploy-runs-on-fridays.md" in result.err  # the file, not a temporary
    assert "free some space on" in result.err
    assert "unexpected" not in result.err and "Traceback" not in result.err
    assert files_under(vault_dir) == before
    assert no_temporary_files(vault_dir)
    assert "remembered" in cli("remember", "The deploy runs on Fridays").out


def test_the_command_line_names_a_read_only_folder(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(atomic, "_open_new", refuse(errno.EROFS))
    result = cli("log", "a line for the buffer")
    assert result.code == 1
    assert "read-only file system" in result.err and "unexpected" not in result.err


def test_the_python_api_raises_the_named_error(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kenomem import Vault as Api

    api = Api(vault_dir)
    api.list()
    monkeypatch.setattr(atomic, "_write_all", refuse())
    with pytest.raises(DiskFull) as caught:
        api.remember("The deploy runs on Fridays")
    assert isinstance(caught.value.__cause__, OSError)


def test_the_mcp_server_names_a_full_disk(vault_dir: Path) -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    from kenomem import Vault as Api
    from kenomem.mcp_server import Calls

    def full(_: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(vault_dir / "a.md"))

    with pytest.raises(ToolError) as caught:
        Calls(Api(vault_dir)).call(full, "remember")
    assert str(caught.value).startswith("disk full")
    assert "bug" not in str(caught.value)


# -- the lock ---------------------------------------------------------------------------------


def test_the_lock_is_taken_when_its_pid_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = VaultLock(tmp_path)
    with monkeypatch.context() as fault:
        fault.setattr(os, "write", refuse())
        fault.setattr(os, "ftruncate", refuse())
        with lock:
            assert lock.fd is not None
    assert lock.fd is None
    with lock:  # and it can be taken again
        assert lock.fd is not None


def test_the_lock_is_taken_read_only_where_the_folder_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lock").write_bytes(b"")
    real_open = os.open

    def read_only(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & (os.O_RDWR | os.O_WRONLY):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *args, **kwargs)

    with monkeypatch.context() as fault:
        fault.setattr(os, "open", read_only)
        with VaultLock(tmp_path) as lock:
            assert lock.fd is not None
    assert (tmp_path / "lock").read_bytes() == b""


def test_a_reading_command_answers_when_the_lock_file_cannot_grow(
    cli: Cli, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("remember", "The deploy runs on Fridays").code == 0
    write(vault_dir, "semantic/hand.md", "A note about the deploy pipeline\n")
    lock = (vault_dir / ".kenomem" / "lock").stat().st_ino
    real = os.write

    def lock_cannot_grow(fd: int, data: Any) -> int:
        if os.fstat(fd).st_ino == lock:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    with monkeypatch.context() as fault:
        fault.setattr(os, "write", lock_cannot_grow)
        result = cli("recall", "deploy", "--no-touch")
    assert result.code == 0, result.err
    assert "pipeline" in result.out


# -- all or nothing ------------------------------------------------------------------------


def short_then_full(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    """os.write to `target` writes half of what it is given, then finds the disk full."""
    real = os.write
    inode = target.stat().st_ino
    calls = [0]

    def write_half(fd: int, data: Any) -> int:
        if os.fstat(fd).st_ino != inode:
            return real(fd, data)
        calls[0] += 1
        if calls[0] == 1:
            return real(fd, bytes(data)[: max(1, len(data) // 2)])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", write_half)


def test_an_append_cut_short_is_taken_back(
    cli: Cli, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("log", "the first entry").code == 0
    day = next((vault_dir / "buffer").glob("*.md"))
    before = day.read_bytes()
    with monkeypatch.context() as fault:
        short_then_full(fault, day)
        result = cli("log", "a second entry that the disk cuts in two " * 20)
    assert result.code == 1 and "disk full" in result.err
    assert day.read_bytes() == before
    assert cli("log", "the third entry").code == 0
    text = day.read_text("utf-8")
    assert text.startswith(before.decode()) and text.endswith("the third entry\n")


def test_a_journal_append_cut_short_is_taken_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state_mod.append_journal(tmp_path, [["a", "x.md", 1.0, 1]])
    before = (tmp_path / state_mod.JOURNAL_NAME).read_bytes()
    with monkeypatch.context() as fault, pytest.raises(OSError):
        short_then_full(fault, tmp_path / state_mod.JOURNAL_NAME)
        state_mod.append_journal(tmp_path, [["a", "y.md", 2.0, 2]] * 50)
    assert (tmp_path / state_mod.JOURNAL_NAME).read_bytes() == before


def test_a_state_save_that_fails_leaves_the_last_one_whole(
    vault: CoreVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault.sync()
    directory = vault.state_dir
    saved = {p.name: p.read_bytes() for p in directory.glob("*.bin")}
    calls = [0]
    real = atomic._write_all

    def third_fails(*args: Any) -> None:
        calls[0] += 1
        if calls[0] == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(*args)

    state = state_mod.load(directory)
    assert state is not None
    with monkeypatch.context() as fault, pytest.raises(OSError):
        fault.setattr(atomic, "_write_all", third_fails)
        state_mod.save(directory, state)
    assert {p.name: p.read_bytes() for p in directory.glob("*.bin")} == saved
    assert no_temporary_files(directory)
    reloaded = state_mod.load(directory)
    assert reloaded is not None and len(reloaded.stats) == len(vault.state.stats)


def test_a_create_that_fails_leaves_no_file_and_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "v" / "episodic" / "2026-03" / "a.md"
    (tmp_path / "v").mkdir()
    with monkeypatch.context() as fault, pytest.raises(OSError) as caught:
        fault.setattr(os, "write", refuse())
        atomic.create_bytes(target, b"text", temp_dir=tmp_path / "v" / ".kenomem" / "tmp")
    assert caught.value.filename == str(target)  # the file it was for, not a temporary one
    assert not (tmp_path / "v" / "episodic").exists()
    assert no_temporary_files(tmp_path)


def test_a_replace_that_fails_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "v").mkdir()
    with monkeypatch.context() as fault, pytest.raises(OSError):
        fault.setattr(os, "write", refuse())
        atomic.write_bytes(tmp_path / "v" / "new" / "a.bin", b"text")
    assert list((tmp_path / "v").iterdir()) == []


def test_forget_that_cannot_write_the_status_moves_nothing(
    cli: Cli, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = cli("remember", "The deploy runs on Fridays", "--json")
    import json

    mem = json.loads(made.out)
    before = files_under(vault_dir)
    with monkeypatch.context() as fault:
        fault.setattr(store, "write_bytes", refuse())
        result = cli("forget", mem["id"])
    assert result.code == 1 and "disk full" in result.err
    assert (vault_dir / mem["path"]).is_file()
    assert files_under(vault_dir) == before
    assert cli("forget", mem["id"]).code == 0  # once there is room, it is done


def test_supersede_that_cannot_mark_the_old_one_adds_nothing(
    cli: Cli, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    old = json.loads(cli("remember", "The deploy runs on Fridays", "--json").out)
    before = files_under(vault_dir)
    with monkeypatch.context() as fault:
        fault.setattr(store, "write_bytes", refuse())
        result = cli("remember", "The deploy runs on Mondays", "--supersedes", old["id"])
    assert result.code == 1 and "disk full" in result.err
    assert files_under(vault_dir) == before


# -- the index lags behind the files, with a warning -----------------------------------------


def full_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every index write finds the disk full."""
    from kenomem.index.whoosh_engine import WhooshEngine

    monkeypatch.setattr(WhooshEngine, "apply", refuse())
    try:
        from kenomem.index.tantivy_engine import TantivyEngine
    except ImportError:
        return
    monkeypatch.setattr(TantivyEngine, "apply", refuse())


def test_a_reading_command_answers_from_the_index_it_has(
    cli: Cli, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("remember", "The deploy runs on Fridays").code == 0
    write(vault_dir, "semantic/hand.md", "A note about the build pipeline\n")
    saved = {p.name: p.read_bytes() for p in (vault_dir / ".kenomem").glob("*.bin")}
    with monkeypatch.context() as fault:
        full_index(fault)
        for args in (("recall", "deploy", "--no-touch"), ("list",), ("stats",)):
            result = cli(*args)
            assert result.code == 0, (args, result.err)
            assert "the index could not be updated" in result.err
            assert "disk full" in result.err
        assert "deploy" in cli("recall", "deploy", "--no-touch").out
        assert "pipeline" not in cli("recall", "pipeline", "--no-touch").out
    # The state kept matches the index kept: once there is room, the edit is indexed.
    assert {p.name: p.read_bytes() for p in (vault_dir / ".kenomem").glob("*.bin")} == saved
    result = cli("recall", "pipeline", "--no-touch")
    assert "pipeline" in result.out and "could not" not in result.err


def test_a_memory_written_but_not_indexed_is_remembered_and_indexed_later(
    cli: Cli, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as fault:
        full_index(fault)
        result = cli("remember", "The deploy runs on Fridays")
    assert result.code == 0 and "remembered" in result.out
    assert "the index could not be updated" in result.err
    assert len(list((vault_dir / "semantic").glob("the-deploy*.md"))) == 1
    assert "Fridays" in cli("recall", "deploy").out
    again = cli("remember", "The deploy runs on Fridays")  # it was remembered: reinforced
    assert "reinforced" in again.out


def test_recall_answers_when_its_touches_cannot_be_written(
    cli: Cli, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("remember", "The deploy runs on Fridays").code == 0
    memory = next((vault_dir / "semantic").glob("the-deploy*.md"))
    before = memory.read_bytes()
    with monkeypatch.context() as fault:
        fault.setattr(atomic, "_write_all", refuse())
        result = cli("recall", "deploy")
    assert result.code == 0 and "Fridays" in result.out
    warnings = [line for line in result.err.splitlines() if line.startswith("warning")]
    assert len(warnings) == 1 and "not recorded" in warnings[0] and "disk full" in warnings[0]
    assert memory.read_bytes() == before
    assert no_temporary_files(vault_dir)


def test_the_watcher_does_not_pass_over_a_batch_the_disk_refused(
    vault: CoreVault, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault.sync()
    vault.index_may_lag = False  # as in the watcher: it retries
    write(vault_dir, "semantic/hand.md", "A note about the build pipeline\n")
    full_index(monkeypatch)
    with pytest.raises(OSError):
        vault.sync_paths(["semantic/hand.md"])


def test_a_heartbeat_that_cannot_be_written_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    heartbeat.write(tmp_path, 0)
    assert heartbeat.trusted(tmp_path)
    with monkeypatch.context() as fault:
        fault.setattr(os, "write", refuse())
        heartbeat.write(tmp_path, 0)
    assert not heartbeat.trusted(tmp_path)
    assert no_temporary_files(tmp_path) and not list(tmp_path.glob(".watcher*"))


def test_tantivy_s_disk_errors_are_told_from_damage() -> None:
    pytest.importorskip("tantivy")
    from kenomem.index.tantivy_io import os_error

    full = ValueError(
        "Failed to open file for write: 'IoError { io_error: Custom { kind: StorageFull, "
        'error: PathError { path: "/v/.kenomem/index/tantivy/.tmpm5TydJ", err: Os { code: '
        '28, kind: StorageFull, message: "No space left on device" } } } }\''
    )
    found = os_error(full, Path("/v/.kenomem/index/tantivy"))
    assert found is not None and found.errno == errno.ENOSPC
    assert found.filename == "/v/.kenomem/index/tantivy"
    read_only = ValueError(
        "Failed to acquire Lockfile: IoError(Os { code: 30, kind: ReadOnlyFilesystem, "
        'message: "Read-only file system" }). None'
    )
    assert (os_error(read_only) or ENOSPC).errno == errno.EROFS
    assert os_error(ValueError("Data corrupted: checksum mismatch")) is None
