"""Running git (share/git.py): a git that does not answer in time is stopped, with all it
started, and says so."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kenomem.errors import SyncError
from kenomem.share import git as gitrun
from tests.share.helpers import git_env


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is gone for every purpose here
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.slow
def test_a_fetch_past_its_timeout_is_stopped_with_the_ssh_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in git_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "v"
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    pidfile = tmp_path / "ssh.pid"
    # An "ssh" that never answers, its output away from git's pipes: only stopping git's
    # whole process group ends it.
    monkeypatch.setenv(
        "GIT_SSH_COMMAND", f"sh -c 'echo $$ > {pidfile}; exec sleep 60 >/dev/null 2>&1' --"
    )
    # Time enough for git to start its ssh on a busy machine: the group stopped is the
    # point, and an ssh not started yet would prove nothing.
    with pytest.raises(SyncError, match="took more than 3s and was stopped") as caught:
        gitrun.git(root, "fetch", "-q", "ssh://git@example.invalid/x.git", timeout=3.0)
    assert "nothing was pushed" in (caught.value.hint or "")
    pid = int(pidfile.read_text().strip())
    # The signal is sent before git returns; the process ends when the system next runs
    # it, which on a busy machine can be a moment later.
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)
