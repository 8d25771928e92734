"""What the watcher tests share: a real `kenomem watch`, started, waited for and stopped."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from kenomem.errors import IndexCorrupt
from kenomem.files.paths import state_dir
from kenomem.index import heartbeat
from kenomem.index import state as state_mod
from kenomem.recall.search import RecallRequest, recall
from kenomem.vault.core import CoreVault

# -- from test_watch.py

DEADLINE = 10.0


T = TypeVar("T")


def wait_for(condition: Callable[[], T], what: str, timeout: float = DEADLINE) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {timeout:g}s waiting for {what}")
        time.sleep(0.02)


def note(title: str, body: str, mem_id: str | None = None) -> str:
    head = f"id: {mem_id}\n" if mem_id else ""
    return f"---\n{head}title: {title}\ntags: [test]\n---\n\n{body}\n"


def indexed(root: Path) -> dict[str, str]:
    """path -> id of every memory in the saved state, read without syncing anything."""
    saved = state_mod.load(state_dir(root))
    if saved is None:
        return {}
    try:
        return {path: mem_id for mem_id, path in saved.ids().items()}
    except IndexCorrupt:  # read in the middle of a save
        return {}


def found(root: Path, query: str, limit: int = 50) -> dict[str, str]:
    """path -> id of what recall returns (without touching anything)."""
    result = recall(CoreVault.open(root), RecallRequest(query, limit=limit, touch=False))
    return {item.path: item.id for item in result.results}


def indexed_as(root: Path, path: str) -> str:
    return wait_for(lambda: indexed(root).get(path, ""), f"{path} to be indexed")


def console_script() -> list[str]:
    found = shutil.which("kenomem", path=os.path.dirname(sys.executable))
    return [found] if found else [sys.executable, "-m", "kenomem"]


def kenomem(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*console_script(), *args, "--vault", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def start_watch(root: Path, tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], Path]:
    out = tmp_path / "watch.out"
    with open(out, "w") as sink:
        process = subprocess.Popen(
            [*console_script(), "watch", "--vault", str(root), *extra],
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
        )

    def beating() -> bool:
        if process.poll() is not None:
            pytest.fail(f"kenomem watch exited with {process.returncode}: {out.read_text()}")
        beat = heartbeat.read(state_dir(root))
        return beat is not None and beat.pid == process.pid and beat.pending == 0

    wait_for(beating, "the watcher's heartbeat")
    return process, out
