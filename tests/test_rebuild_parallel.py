"""A large rebuild is shared among writer processes; the index must be the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenomem.index import whoosh_engine
from kenomem.recall import RecallRequest, recall
from kenomem.vault import Vault


def _fill(vault_dir: Path, n: int) -> None:
    folder = vault_dir / "semantic" / "bulk"
    folder.mkdir(parents=True)
    for i in range(n):
        word = "zebra" if i % 500 == 7 else "plain"
        (folder / f"m{i:05d}.md").write_text(
            f"---\nid: mem_20260101_000000_{i:05d}\ntitle: note {i}\n---\n\n"
            f"A {word} note number {i}.\n",
            encoding="utf-8",
        )


@pytest.mark.parametrize("procs", [1, 3])
def test_rebuild_in_several_processes_indexes_everything(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, procs: int
) -> None:
    monkeypatch.setattr(whoosh_engine, "_PARALLEL_FROM", 50)
    monkeypatch.setattr(whoosh_engine, "_procs", lambda: procs)
    _fill(vault_dir, 600)
    vault = Vault.open(vault_dir)
    report = vault.rebuild()
    assert report.indexed == 600 == vault.engine.count()
    found = recall(vault, RecallRequest("zebra", limit=20, touch=False))
    assert sorted(item.id[-5:] for item in found.results) == [f"{i:05d}" for i in (7, 507)]
    assert vault.engine.lookup(["mem_20260101_000000_00599"])  # the last one is there too
