"""The vault's own files against other local users and symlink swaps (docs/security.md,
"The vault's own files"):

- a folder flipped between a real folder and a symlink to an outside folder, as fast as
  the kernel allows, while real `kenomem remember` and `log` processes write into it: no
  file ever lands outside, each write that succeeds is a memory (or entry) inside the
  vault, each that fails is the clean unsafe-path error (`files/beneath.py`);
- `.kenomem/lock` made a symlink to a file outside: the file is never truncated or
  written, the command says what to do (`files/lock.py`);
- a `.kenomem` that is a file, a symlink, or another user's folder is refused with its
  fix, while a vault folder others may write still works for its owner
  (`paths.state_dir`, `paths.private_dir`).

The flip is `renameat2(RENAME_EXCHANGE)`: the folder's name is always there, a folder or
a link, with no moment in between. The second user is made once per session with
`useradd` (root only; skipped otherwise) and removed at the end.
"""

from __future__ import annotations

import ctypes
import json
import os
import pwd
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kenomem.errors import UnsafePath
from tests.adversarial.helpers import finish, kenomem, start
from tests.adversarial.hostile import clean_exit, tree
from tests.conftest import TEMPLATE

OTHER_USER = "kenomem-t24-other"  # made and removed by this module's tests only
STORM_SECONDS = 30.0  # a bound, never reached: the storm ends with its last process
RENAME_EXCHANGE = 2
# Twenty statements that share no word but the frame: none is taken for another's repeat.
PAIRS = list(
    zip(
        "Ana Bruno Carla Duarte Elsa Filipe Gil Helena Ivo Joana Kiko Lara Mauro Nuno Olga "
        "Paulo Quim Rita Sara Tiago".split(),
        "Aveiro Braga Cascais Dafundo Ericeira Faro Gaia Horta Ilhavo Lagos Mafra Nazare "
        "Obidos Peniche Queluz Sagres Tavira Viana Sines Vigo".split(),
        strict=True,
    )
)
UNSAFE = ("symlink to outside the vault", "changed into a symlink while kenomem used it")


def _exchanger() -> Any:
    """glibc's `renameat2`, or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    return getattr(libc, "renameat2", None)


_renameat2 = _exchanger()
needs_exchange = pytest.mark.skipif(
    _renameat2 is None, reason="needs Linux's renameat2 to swap a folder and a link at once"
)


def exchange(a: Path, b: Path) -> None:
    """Swap the names `a` and `b` in one step (both must exist)."""
    assert _renameat2 is not None
    at_cwd = -100
    if _renameat2(at_cwd, os.fsencode(a), at_cwd, os.fsencode(b), RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(a))


class Flipper:
    """Flips `folder` between itself and a symlink to `outside`, until stopped."""

    def __init__(self, folder: Path, outside: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.link = folder.with_name(f".{folder.name}-swap")  # hidden: no scan reads it
        self.link.symlink_to(outside, target_is_directory=True)
        self.flips = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        deadline = time.monotonic() + STORM_SECONDS
        while not self._stop.is_set() and time.monotonic() < deadline:
            exchange(self.folder, self.link)
            self.flips += 1

    def __enter__(self) -> Flipper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if self.folder.is_symlink():  # the real folder back in its place
            exchange(self.folder, self.link)
        self.link.unlink()


@pytest.fixture
def storm_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    shutil.copytree(TEMPLATE, vault)
    done = kenomem(vault, "list", "--json")  # the index and .kenomem/ made
    assert done.returncode == 0, done.stderr
    return vault


def outside_folder(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    return outside


def failed_cleanly(code: int, out: str, err: str, what: object) -> None:
    """A write refused by the swap: the unsafe-path error, its exit code, one line."""
    clean_exit(code, out, err, what)
    assert code == UnsafePath.exit_code, (what, err)
    assert any(why in err for why in UNSAFE), (what, err)


@needs_exchange
@pytest.mark.slow
@pytest.mark.parametrize(
    ("folder", "how"),
    [
        ("semantic", ("--type", "semantic")),
        ("episodic/2026-11", ("--type", "episodic", "--when", "2026-11-03T10:00:00Z")),
    ],
    ids=["semantic", "episodic month"],
)
def test_remember_never_writes_through_a_folder_swapped_for_a_link(
    storm_vault: Path, tmp_path: Path, folder: str, how: tuple[str, ...]
) -> None:
    outside = outside_folder(tmp_path)
    texts = [f"{keeper} keeps the {place} lighthouse" for keeper, place in PAIRS]
    with Flipper(storm_vault / folder, outside) as flipper:
        running = [start(storm_vault, "remember", "--json", *how, text) for text in texts]
        results = [finish(p) for p in running]
    assert flipper.flips > 0
    assert tree(outside) == {}, "a memory was written outside the vault"
    made = []
    for text, (code, out, err) in zip(texts, results, strict=True):
        if code != 0:
            failed_cleanly(code, out, err, text)
            continue
        clean_exit(code, out, err, text)
        result = json.loads(out)
        written = storm_vault / result["path"]
        assert result["path"].startswith(folder + "/"), result
        assert written.is_file() and not written.is_symlink(), result
        assert written.resolve().is_relative_to(storm_vault.resolve()), result
        assert text in written.read_text(encoding="utf-8")
        made.append(result["id"])
    assert made, "no remember succeeded during the storm"
    listed = kenomem(storm_vault, "list", "--json", "--limit", "100")
    assert listed.returncode == 0, listed.stderr
    assert set(made) <= {m["id"] for m in json.loads(listed.stdout)["memories"]}


@needs_exchange
@pytest.mark.slow
def test_log_never_appends_through_a_buffer_swapped_for_a_link(
    storm_vault: Path, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    # A day each: each log makes its day's file, the write with the widest window.
    days = [f"2026-11-{n:02d}" for n in range(1, 17)]
    texts = [f"{keeper} lit the {place} lamps" for keeper, place in PAIRS[: len(days)]]
    with Flipper(storm_vault / "buffer", outside) as flipper:
        running = [
            start(storm_vault, "log", "--json", "--at", f"{day}T10:00:00Z", text)
            for day, text in zip(days, texts, strict=True)
        ]
        results = [finish(p) for p in running]
    assert flipper.flips > 0
    assert tree(outside) == {}, "an entry was written outside the vault"
    succeeded = 0
    for day, text, (code, out, err) in zip(days, texts, results, strict=True):
        written = storm_vault / "buffer" / f"{day}.md"
        if code != 0:
            failed_cleanly(code, out, err, text)
            assert not written.exists() or text not in written.read_text(encoding="utf-8")
            continue
        clean_exit(code, out, err, text)
        assert json.loads(out)["path"] == f"buffer/{day}.md"
        assert written.is_file() and not written.is_symlink()
        assert written.read_text(encoding="utf-8").count(text) == 1, text
        succeeded += 1
    assert succeeded, "no log succeeded during the storm"


# -- .kenomem/lock and the heartbeat ------------------------------------------------------


def test_a_lock_that_is_a_symlink_is_never_written_through(
    storm_vault: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "precious.txt"
    victim.write_bytes(b"a file of the user's, outside the vault\n")
    lock = storm_vault / ".kenomem" / "lock"
    lock.unlink(missing_ok=True)
    lock.symlink_to(victim)
    done = kenomem(storm_vault, "remember", "The harbour gate opens at seven")
    assert victim.read_bytes() == b"a file of the user's, outside the vault\n"
    clean_exit(done.returncode, done.stdout, done.stderr, "remember")
    assert done.returncode == UnsafePath.exit_code
    assert f"{lock} is a symlink" in done.stderr and f"rm {lock}" in done.stderr
    lock.unlink()  # as the hint says: then all is well again
    again = kenomem(storm_vault, "remember", "The harbour gate opens at seven")
    assert again.returncode == 0, again.stderr
    assert not lock.is_symlink() and victim.read_bytes().startswith(b"a file")


# -- .kenomem must be a real folder of the user's own -------------------------------------


@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_a_state_folder_that_is_not_a_folder_is_refused(
    storm_vault: Path, tmp_path: Path, kind: str
) -> None:
    state = storm_vault / ".kenomem"
    shutil.rmtree(state)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if kind == "file":
        state.write_bytes(b"brought by a sync\n")
    else:
        state.symlink_to(elsewhere)
    for args in (("remember", "The harbour gate opens at seven"), ("recall", "harbour")):
        done = kenomem(storm_vault, *args)
        clean_exit(done.returncode, done.stdout, done.stderr, args)
        assert done.returncode == UnsafePath.exit_code, args
        assert "not a folder of the vault's own" in done.stderr and "rm " in done.stderr
    assert tree(elsewhere) == {}
    assert kind == "symlink" or state.read_bytes() == b"brought by a sync\n"


@pytest.fixture(scope="session")
def other_uid() -> Iterator[int]:
    """A second Unix user, made for these tests and removed after them (one left by an
    interrupted run is used, then removed: the name is these tests' own). The tests of
    this file run in one process (`make test` hands whole files to its workers); a user
    another run made meanwhile is used as it is."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("playing another user needs root")
    if shutil.which("useradd") is None:
        pytest.skip("useradd is not installed")
    try:
        pwd.getpwnam(OTHER_USER)
    except KeyError:
        made = subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", OTHER_USER],
            check=False,
            capture_output=True,
            timeout=60,
        )
        assert made.returncode in (0, 9), made.stderr  # 9: made by another run meanwhile
    try:
        yield pwd.getpwnam(OTHER_USER).pw_uid
    finally:
        subprocess.run(["userdel", OTHER_USER], check=False, capture_output=True, timeout=60)


def test_another_users_state_folder_is_refused(storm_vault: Path, other_uid: int) -> None:
    # In a vault folder others may write, another user can put their own `.kenomem/`
    # there first: what kenomem would load from it (an index, its lock) is theirs.
    state = storm_vault / ".kenomem"
    for path in [state, *state.rglob("*")]:
        os.chown(path, other_uid, other_uid, follow_symlinks=False)
    before = tree(state)
    for args in (("remember", "The harbour gate opens at seven"), ("recall", "harbour")):
        done = kenomem(storm_vault, *args)
        clean_exit(done.returncode, done.stdout, done.stderr, args)
        assert done.returncode == UnsafePath.exit_code, args
        assert f"{state} belongs to another user (uid {other_uid})" in done.stderr
        assert "chown" in done.stderr and "rm -r" in done.stderr
    assert tree(state) == before  # nothing read into memory, nothing written


def test_a_vault_folder_others_may_write_still_works_for_its_owner(
    storm_vault: Path, other_uid: int
) -> None:
    os.chmod(storm_vault, 0o777)
    semantic = storm_vault / "semantic"
    semantic.mkdir(exist_ok=True)
    os.chown(semantic, other_uid, other_uid)  # a memory folder of theirs: still a memory folder
    os.chmod(semantic, 0o777)
    done = kenomem(storm_vault, "remember", "--type", "semantic", "The gate opens at seven")
    assert done.returncode == 0, done.stderr
    found = kenomem(storm_vault, "recall", "gate", "--json")
    assert found.returncode == 0, found.stderr
    assert "The gate opens at seven" in found.stdout
    assert os.stat(storm_vault / ".kenomem").st_mode & 0o777 == 0o700
