"""Running git: a subprocess with a timeout, never a prompt, its errors made kenomem's."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from kenomem.errors import SyncError

LOCAL_TIMEOUT = 60.0  # seconds: a commit, a status, a merge
NETWORK_TIMEOUT = 120.0  # a fetch or a push


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
    timeout: float = LOCAL_TIMEOUT,
    check: bool = True,
) -> Done:
    """Run `git args` in `root`; with `check`, a non-zero exit is a `SyncError`."""
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


def git_bytes(root: Path, *args: str, stdin: bytes, timeout: float = LOCAL_TIMEOUT) -> bytes:
    """What `git args` prints, as bytes (file contents, as `cat-file` gives them); a
    non-zero exit is a `SyncError`."""
    code, out, err = _run(root, list(args), stdin, timeout, args[0])
    if code != 0:
        raise SyncError(
            f"git {' '.join(args[:2])} failed: {last_line(err.decode('utf-8', 'replace'))}",
            hint="run the same git command in the vault to see all it says",
        )
    return out


def git_paths(root: Path, *args: str, check: bool = True) -> list[str]:
    """The paths a git command lists (it is given `-z`: any character in a name)."""
    listed = git(root, args[0], "-z", *args[1:], check=check).out
    return [p for p in listed.split("\0") if p]


def _run(
    root: Path, args: list[str], stdin: bytes | None, timeout: float, what: str
) -> tuple[int, bytes, bytes]:
    exe = shutil.which("git")
    if exe is None:
        raise SyncError(
            "git is not installed (or not on PATH): kenomem sync shares the vault through git",
            hint="install git (apt install git, brew install git) and run kenomem sync again",
        )
    # git in a process group of its own: on a timeout the whole group is stopped, the ssh
    # or helper it started included (which would otherwise live on, or hold the output
    # pipes open and keep this process waiting past the timeout).
    process = subprocess.Popen(
        [exe, *args],
        cwd=root,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(),
        start_new_session=True,
    )
    try:
        out, err = process.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        _stop_group(process)
        raise SyncError(
            f"git {what} took more than {timeout:g}s and was stopped",
            hint="check the network and the remote (git remote -v), then run kenomem sync "
            "again; nothing was pushed",
        ) from exc
    except BaseException:  # an interrupt: git and what it started end with this process
        _stop_group(process)
        raise
    return process.returncode, out, err


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.communicate()


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no message"
