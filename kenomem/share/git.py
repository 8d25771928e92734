"""Running git: a subprocess with a timeout, never a prompt, its errors made kenomem's."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from kenomem.errors import SyncError

LOCAL_TIMEOUT = 60.0  # seconds: a commit, a status, a merge
NETWORK_TIMEOUT = 120.0  # a fetch or a push
LITERAL = ":(literal)"  # a pathspec's prefix: the path as it is, no pattern
STOP_GRACE = 5.0  # seconds git has, once stopped, to remove its lock files and end


class Done(NamedTuple):
    code: int
    out: str
    err: str


def environment() -> dict[str, str]:
    """git's environment: no prompt for a password (it would hang an agent), messages in
    English (some are read), no pager."""
    env = dict(os.environ)
    env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", GIT_PAGER="cat", GIT_EDITOR="true")
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    return env


def git(
    root: Path,
    *args: str,
    config: Sequence[str] = (),
    stdin: str | None = None,
    timeout: float | None = None,
    check: bool = True,
) -> Done:
    """Run `git args` in `root` (within `timeout` seconds, `LOCAL_TIMEOUT` by default);
    with `check`, a non-zero exit is a `SyncError`."""
    command = [*(part for c in config for part in ("-c", c)), *args]
    code, out, err = _run(
        root, command, None if stdin is None else stdin.encode(), timeout, args[0]
    )
    result = Done(code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))
    if check and result.code != 0:
        raise SyncError(
            f"git {' '.join(args[:2])} failed: {last_line(result.err or result.out)}",
            hint="run the same git command in the vault to see all it says",
        )
    return result


def git_bytes(root: Path, *args: str, stdin: bytes = b"", timeout: float | None = None) -> bytes:
    """What `git args` prints, as bytes (file contents, as `cat-file` gives them); a
    non-zero exit is a `SyncError`."""
    code, out, err = _run(root, list(args), stdin, timeout, args[0])
    if code != 0:
        raise SyncError(
            f"git {' '.join(args[:2])} failed: {last_line(err.decode('utf-8', 'replace'))}",
            hint="run the same git command in the vault to see all it says",
        )
    return out


def blobs(root: Path, names: list[str]) -> list[bytes | None]:
    """The contents of `names` (object ids, or "REV:path" for a path without a newline:
    `cat-file --batch` reads one name a line), in order; None for one that is missing."""
    if not names:
        return []
    out = git_bytes(root, "cat-file", "--batch", stdin=b"".join(n.encode() + b"\n" for n in names))
    at = 0
    found: list[bytes | None] = []
    for _ in names:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) != 3 or header[1] != b"blob":
            found.append(None)
            continue
        size = int(header[2])
        found.append(out[at : at + size])
        at += size + 1
    return found


def pathspecs(paths: list[str]) -> str:
    """`paths` as git's `--pathspec-from-file=- --pathspec-file-nul` reads them, each
    taken literally (a `*`, `?` or `:` in a name is no pattern)."""
    return "".join(f"{LITERAL}{p}\0" for p in paths)


def git_paths(root: Path, *args: str, check: bool = True) -> list[str]:
    """The paths a git command lists (it is given `-z`: any character in a name)."""
    listed = git(root, args[0], "-z", *args[1:], check=check).out
    return [p for p in listed.split("\0") if p]


def _run(
    root: Path, args: list[str], stdin: bytes | None, timeout: float | None, what: str
) -> tuple[int, bytes, bytes]:
    exe = shutil.which("git")
    if exe is None:
        raise SyncError(
            "git is not installed (or not on PATH): kenomem sync shares the vault through git",
            hint="install git (apt install git, brew install git) and run kenomem sync again",
        )
    limit = LOCAL_TIMEOUT if timeout is None else timeout
    # git writes to files, not pipes: a git that outlives this process (killed with -9)
    # finishes its step instead of dying of a broken pipe at its next message, and so
    # does a merge driver it runs. It runs in a process group of its own: on a timeout
    # the whole group is stopped, the ssh or helper it started included.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            [exe, *args],
            cwd=root,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=environment(),
            start_new_session=True,
        )
        try:
            _wait(process, stdin, limit)
        except subprocess.TimeoutExpired as exc:
            _stop_group(process)
            raise SyncError(
                f"git {what} took more than {limit:g}s and was stopped",
                hint="check the network and the remote (git remote -v), then run kenomem "
                "sync again; nothing was pushed",
            ) from exc
        except BaseException:  # an interrupt: git and what it started end with this process
            _stop_group(process)
            raise
        out.seek(0)
        err.seek(0)
        return process.returncode, out.read(), err.read()


def _wait(process: subprocess.Popen[bytes], stdin: bytes | None, timeout: float) -> None:
    """Wait for git to end, its input given. Where the system can say when a process
    ends (a pidfd), that is waited for rather than polled: a poll sleeps up to a few ms
    past the end of each of the many short gits a sync runs."""
    if stdin is None and hasattr(os, "pidfd_open"):
        try:
            fd = os.pidfd_open(process.pid)
        except OSError:
            pass
        else:
            try:
                ended = select.select([fd], [], [], timeout)[0]
            finally:
                os.close(fd)
            if not ended:
                raise subprocess.TimeoutExpired(process.args, timeout)
    process.communicate(stdin, timeout=timeout)


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """Stop git and all it started: asked first (SIGTERM: git removes its lock files,
    `.git/index.lock` among them, as it ends), then killed."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        if sig == signal.SIGTERM:
            try:
                process.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                pass
    process.wait()


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no message"
