"""What the sleep-cycle tests share: buffer days logged, vaults compared, a fake LLM
command.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from kenomem.capture.log import LogRequest
from kenomem.capture.log import log as log_entry
from kenomem.files import store
from kenomem.index import Filters
from kenomem.sleep.consolidate import ConsolidateRequest, consolidate
from kenomem.vault.core import CoreVault

# -- from test_consolidate.py

NOW = datetime(2026, 3, 4, 4, 0, tzinfo=UTC)  # the night after the judged day


def at(day: int, hour: int, minute: int, second: int = 0) -> datetime:
    return datetime(2026, 3, day, hour, minute, second, tzinfo=UTC)


def log(vault: CoreVault, day: int, hour: int, minute: int, text: str, who: str = "Adrian") -> None:
    log_entry(
        vault, LogRequest(text, who=who, session="s1", channel="telegram", at=at(day, hour, minute))
    )


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".kenomem" not in p.relative_to(root).parts
    }


def index_ids(root: Path) -> dict[str, tuple[str, str]]:
    """id -> (path, status) of every memory in the index, whatever its status."""
    vault = CoreVault.open(root)
    vault.sync()
    hits = vault.browse(Filters(statuses=()), limit=None).hits
    found = {hit.doc.id: (hit.doc.path, hit.doc.status) for hit in hits}
    assert len(found) == len(hits), "an id is in the index twice"
    assert {i: path for i, (path, _) in found.items()} == vault.ids()
    return found


def memories(root: Path) -> list[dict[str, Any]]:
    """Every memory file's frontmatter and body, with its path."""
    found = []
    for folder in ("semantic", "episodic", "procedural", "working", "archive"):
        for path in sorted((root / folder).rglob("*.md")):
            text = path.read_text(encoding="utf-8")
            if not text.startswith("---\n"):
                continue
            _, head, body = text.split("---\n", 2)
            meta = yaml.load(head, Loader=yaml.BaseLoader)
            meta["path"] = path.relative_to(root).as_posix()
            meta["body"] = body.strip()
            found.append(meta)
    return found


def of(root: Path, **match: str) -> list[dict[str, Any]]:
    return [m for m in memories(root) if all(m.get(k) == v for k, v in match.items())]


def failing_after(monkeypatch: pytest.MonkeyPatch, name: str, calls: int) -> None:
    original = getattr(store, name)
    count = [0]

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        if count[0] > calls:
            raise OSError("disk on fire")
        return original(*args, **kwargs)

    monkeypatch.setattr(store, name, wrapper)


def clean_copy(vault_dir: Path, tmp_path: Path) -> Path:
    """The vault as one clean run leaves it, made on a copy."""
    copy = tmp_path / "clean"
    shutil.copytree(vault_dir, copy, ignore=shutil.ignore_patterns(".kenomem"))
    consolidate(CoreVault.open(copy), ConsolidateRequest(), now=NOW)
    return copy


def assert_same_vault(got: Path, want: Path) -> None:
    assert snapshot(got) == snapshot(want)
    assert index_ids(got) == index_ids(want)


# -- from test_llm.py

FAKE = """
import json, sys, time
from pathlib import Path

here = Path(__file__).parent
(here / "prompt.txt").write_text(sys.stdin.read(), encoding="utf-8")
runs = here / "runs.txt"
runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
plan = json.loads((here / "plan.json").read_text(encoding="utf-8"))
time.sleep(plan.get("sleep", 0))
sys.stdout.write(plan.get("answer", ""))
sys.stderr.write(plan.get("stderr", ""))
sys.exit(plan.get("exit", 0))
"""


class Fake:
    """A fake LLM command and what it was asked."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir()
        self.folder = folder
        (folder / "fake.py").write_text(FAKE, encoding="utf-8")
        self.command = shlex.join([sys.executable, str(folder / "fake.py")])
        self.answer("")

    def answer(self, text: str, *, exit: int = 0, sleep: float = 0, stderr: str = "") -> None:
        plan = {"answer": text, "exit": exit, "sleep": sleep, "stderr": stderr}
        (self.folder / "plan.json").write_text(json.dumps(plan), encoding="utf-8")

    @property
    def prompt(self) -> str:
        return (self.folder / "prompt.txt").read_text(encoding="utf-8")

    @property
    def runs(self) -> int:
        path = self.folder / "runs.txt"
        return len(path.read_text()) if path.exists() else 0
