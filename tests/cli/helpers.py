"""What the command-line tests share: the console script, a watcher with its command
server.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kenomem.cli.served import client as forkclient
from kenomem.files.paths import state_dir
from kenomem.index import heartbeat

# -- from test_forkserver.py

DEADLINE = 15.0


SERVED_NOTE = "run by the watcher's command server"


def wait_for(condition: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


class Watch:
    def __init__(self, vault: Path, log: Path, *extra: str) -> None:
        self.vault = vault
        self.log = log
        with open(log, "w") as sink:
            self.process = subprocess.Popen(
                [console_script(), "watch", "--vault", str(vault), "--verbose", *extra],
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env(),
            )
        wait_for(self.beating, "the watcher's heartbeat")

    def beating(self) -> bool:
        if self.process.poll() is not None:
            pytest.fail(f"kenomem watch exited with {self.process.returncode}: {self.text()}")
        beat = heartbeat.read(state_dir(self.vault))
        return beat is not None and beat.pid == self.process.pid and beat.pending == 0

    def text(self) -> str:
        return self.log.read_text()

    def server_pid(self) -> int:
        for line in self.text().splitlines():
            if "serving read-only commands" in line:
                return int(line.rsplit("(process ", 1)[1].rstrip(")"))
        pytest.fail(f"the watcher started no command server: {self.text()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(DEADLINE)


def env(**extra: str) -> dict[str, str]:
    out = dict(os.environ)
    out.pop(forkclient.ENV_OFF, None)
    out["NO_COLOR"] = "1"
    out.update(extra)
    return out


def kenomem(
    *args: str, cwd: Path | None = None, local: bool = False, **extra: str
) -> subprocess.CompletedProcess[str]:
    if local:
        extra[forkclient.ENV_OFF] = "1"
    return subprocess.run(
        [console_script(), *args],
        env=env(**extra),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


# -- from test_console_script.py


def console_script() -> str:
    bindir = os.path.dirname(sys.executable)
    found = shutil.which("kenomem", path=bindir) or str(Path(sys.executable).with_name("kenomem"))
    if not os.access(found, os.X_OK):
        pytest.fail(f"the kenomem console script is not installed next to {sys.executable}")
    return found


def note(title: str, body: str, mem_id: str) -> str:
    return f"---\nid: {mem_id}\ntype: semantic\ntitle: {title}\n---\n{body}\n"
