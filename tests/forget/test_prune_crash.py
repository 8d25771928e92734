"""`prune` killed at any point: every memory is where it was or in the archive, never lost
or doubled, and the next prune finishes the plan, ending where an uninterrupted run ends."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import kenomem.forget.prune
from kenomem.files import store
from kenomem.forget.prune import PruneRequest, prune
from kenomem.vault.core import CoreVault
from tests.forget.helpers import (
    KENOMEM,
    NOW,
    SUMMARIES,
    check_nothing_lost,
    crowded,
    outside_state,
)

PENDING = ".kenomem/prune-pending.json"
RETIRED = 11  # archive moves the fixture's prune makes


class Crash(Exception):
    pass


def failing_after(
    calls: int, real: Callable[..., Any], counts: Callable[..., bool] = lambda *a, **k: True
) -> Callable[..., Any]:
    """`real`, raising Crash on its `calls`-th call (of those `counts` picks) instead."""
    seen = [0]

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        counted = counts(*args, **kwargs)
        seen[0] += counted
        if counted and seen[0] == calls:
            raise Crash(f"call {calls}")
        return real(*args, **kwargs)

    return wrapper


def into_archive(_source: Any, dest: Any, **folders: Any) -> bool:
    """Whether a rename moves a file into the archive (by path, or by name in a folder
    held by descriptor, as `paths.move_inside` renames)."""
    held = folders.get("dst_dir_fd")
    folder = os.readlink(f"/proc/self/fd/{held}") if held is not None else ""
    return "/archive/" in f"{folder}/{dest}"


@pytest.fixture
def pair(vault_dir: Path, tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """The vault to interrupt and a copy pruned without interruption."""
    made = crowded(vault_dir)
    copy = tmp_path / "copy"
    shutil.copytree(vault_dir, copy)
    result = prune(CoreVault.open(copy), PruneRequest(), now=NOW)
    assert (result.archived, result.summarized) == (RETIRED, SUMMARIES)
    return vault_dir, copy, made


@pytest.mark.parametrize(
    ("target", "calls"),
    [
        *(("archive_file", n) for n in (1, 2, 6, RETIRED)),
        *(("rename", n) for n in (1, 5, RETIRED)),
        *(("summary", n) for n in (1, SUMMARIES)),
        ("pending", 1),
        ("refresh", 1),
    ],
)
def test_an_interrupted_prune_is_finished_by_the_next(
    pair: tuple[Path, Path, dict[str, str]],
    monkeypatch: pytest.MonkeyPatch,
    target: str,
    calls: int,
) -> None:
    vault_dir, copy, made = pair
    with monkeypatch.context() as patch:
        if target == "archive_file":
            patch.setattr(
                kenomem.forget.prune,
                "archive_file",
                failing_after(calls, kenomem.forget.prune.archive_file),
            )
        elif target == "rename":
            patch.setattr(os, "rename", failing_after(calls, os.rename, into_archive))
        elif target == "summary":
            patch.setattr(store, "create", failing_after(calls, store.create))
        elif target == "pending":
            patch.setattr(
                kenomem.forget.prune,
                "write_bytes",
                failing_after(calls, kenomem.forget.prune.write_bytes),
            )
        else:  # the moves are done, the index not told yet
            patch.setattr(CoreVault, "refresh", failing_after(calls, CoreVault.refresh))
        with pytest.raises(Crash):
            prune(CoreVault.open(vault_dir), PruneRequest(), now=NOW)
    check_nothing_lost(vault_dir, made)
    rerun = prune(CoreVault.open(vault_dir), PruneRequest(), now=NOW)
    check_nothing_lost(vault_dir, made)
    assert outside_state(vault_dir) == outside_state(copy)
    assert not (vault_dir / PENDING).exists()
    if target in ("archive_file", "rename"):
        assert rerun.resumed == RETIRED - (calls - 1)
    again = prune(CoreVault.open(vault_dir), PruneRequest(dry_run=True), now=NOW).plan
    assert (again.retire, again.summaries) == ([], [])


@pytest.mark.parametrize("calls", [1, 4, RETIRED])
def test_a_prune_interrupted_between_the_move_and_the_status_is_finished(
    pair: tuple[Path, Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch, calls: int
) -> None:
    """The file is in the archive, its frontmatter not yet marked: the rerun marks it."""
    vault_dir, copy, made = pair
    with monkeypatch.context() as patch:
        patch.setattr(store, "update_keys", failing_after(calls, store.update_keys))
        with pytest.raises(Crash):
            prune(CoreVault.open(vault_dir), PruneRequest(), now=NOW)
    check_nothing_lost(vault_dir, made)
    prune(CoreVault.open(vault_dir), PruneRequest(), now=NOW)
    check_nothing_lost(vault_dir, made)
    assert outside_state(vault_dir) == outside_state(copy)


def test_a_dry_run_reports_an_interrupted_prune_and_changes_nothing(
    pair: tuple[Path, Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault_dir, _copy, _made = pair
    with monkeypatch.context() as patch:
        patch.setattr(
            kenomem.forget.prune,
            "archive_file",
            failing_after(4, kenomem.forget.prune.archive_file),
        )
        with pytest.raises(Crash):
            prune(CoreVault.open(vault_dir), PruneRequest(), now=NOW)
    before = outside_state(vault_dir)
    pending = (vault_dir / PENDING).read_bytes()
    result = prune(CoreVault.open(vault_dir), PruneRequest(dry_run=True), now=NOW)
    assert result.resumed == RETIRED
    assert outside_state(vault_dir) == before
    assert (vault_dir / PENDING).read_bytes() == pending


@pytest.mark.parametrize("garbage", ["{not json", '{"retire": 3}', "[]"])
def test_a_pending_file_edited_by_hand_is_ignored(
    pair: tuple[Path, Path, dict[str, str]], garbage: str
) -> None:
    vault_dir, copy, made = pair
    (vault_dir / ".kenomem").mkdir(exist_ok=True)
    (vault_dir / PENDING).write_text(garbage, encoding="utf-8")
    result = prune(CoreVault.open(vault_dir), PruneRequest(), now=NOW)
    assert (result.resumed, result.archived) == (0, RETIRED)
    check_nothing_lost(vault_dir, made)
    assert outside_state(vault_dir) == outside_state(copy)
    assert not (vault_dir / PENDING).exists()


# -- a real process, killed ---------------------------------------------------------------

KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path

    import kenomem.forget.prune
    from kenomem.files import store
    from kenomem.vault.core import CoreVault

    root, target, calls = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    seen = [0]

    def dying(real):
        def wrapper(*args, **kwargs):
            seen[0] += 1
            if seen[0] == calls:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)
        return wrapper

    if target == "move":
        kenomem.forget.prune.archive_file = dying(kenomem.forget.prune.archive_file)
    else:  # after the rename, before the status is written
        store.update_keys = dying(store.update_keys)
    kenomem.forget.prune.prune(CoreVault.open(root), kenomem.forget.prune.PruneRequest())
    print("not killed")
    """
)
STAMPS = re.compile(r"^(archived_at|created|last_accessed): .*$", re.MULTILINE)


def masked(root: Path) -> dict[str, str]:
    """The files outside .kenomem/, with the times a run takes from the clock masked."""
    return {rel: STAMPS.sub(r"\1: T", data.decode()) for rel, data in outside_state(root).items()}


def run(*args: str, vault: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KENOMEM_VAULT": str(vault), "NO_COLOR": "1"}
    return subprocess.run(
        list(args), env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize(("target", "calls"), [("move", 1), ("move", 7), ("status", 3)])
def test_a_killed_prune_process_is_finished_by_the_next(
    vault_dir: Path, tmp_path: Path, target: str, calls: int
) -> None:
    made = crowded(vault_dir, now=datetime.now(UTC))
    copy = tmp_path / "copy"
    shutil.copytree(vault_dir, copy)
    script = tmp_path / "killer.py"
    script.write_text(KILLER, encoding="utf-8")

    killed = run(sys.executable, str(script), str(vault_dir), target, str(calls), vault=vault_dir)
    assert killed.returncode == -9, (killed.stdout, killed.stderr)
    check_nothing_lost(vault_dir, made)
    assert (vault_dir / PENDING).exists()

    finished = run(KENOMEM, "prune", "--json", vault=vault_dir)
    assert finished.returncode == 0, finished.stderr
    assert json.loads(finished.stdout)["resumed"] == RETIRED - (
        calls - 1 if target == "move" else calls
    )
    reference = run(KENOMEM, "prune", "--json", vault=copy)
    assert reference.returncode == 0, reference.stderr
    check_nothing_lost(vault_dir, made)
    assert masked(vault_dir) == masked(copy)
    again = run(KENOMEM, "prune", "--dry-run", "--json", vault=vault_dir)
    assert json.loads(again.stdout)["retire"] == []
