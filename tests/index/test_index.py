"""The index is derived: deleted, damaged or outdated, it is rebuilt from the files
(on each engine)."""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

import kenomem.index.rebuild
import kenomem.vault.core
from kenomem.capture.remember import RememberRequest, remember
from kenomem.forget.archive import ForgetRequest, forget
from kenomem.recall.search import RecallRequest, recall
from kenomem.vault.core import CoreVault
from kenomem.vault.views import ListRequest, list_memories, stats
from tests.conftest import index_files, write

pytestmark = pytest.mark.both_engines  # each test runs on Whoosh and on tantivy

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def ids(vault: CoreVault, query: str, archive: bool = False) -> list[str]:
    request = RecallRequest(query, touch=False, now=NOW, archive=archive, limit=50)
    return sorted(item.id for item in recall(vault, request).results)


@pytest.fixture
def known(vault_dir: Path) -> dict[str, str]:
    """One memory of each kind, archived ones included; query word -> id."""
    vault = CoreVault.open(vault_dir)
    out = {}
    for word, kind in (
        ("lighthouse", "semantic"),
        ("harbour", "episodic"),
        ("kayak", "procedural"),
        ("anchor", "semantic"),
    ):
        made = remember(vault, RememberRequest(f"The {word} story number one", type=kind, now=NOW))
        out[word] = made.id
    task = RememberRequest("The rudder task", session="s1", type="working", now=NOW)
    made = remember(vault, task)
    out["rudder"] = made.id
    forget(vault, ForgetRequest(out["anchor"]))
    write(vault_dir, "semantic/plain.md", "# Quince\n\nThe quince tree is by the gate.\n")
    out["quince"] = ids(vault, "quince")[0]
    return out


def all_found(vault: CoreVault, known: dict[str, str]) -> None:
    for word, mem_id in known.items():
        assert ids(vault, word, archive=word == "anchor") == [mem_id], word
    assert ids(vault, "anchor") == []


def truncate_segments(vault_dir: Path, keep: float = 0.0) -> None:
    files = index_files(vault_dir)
    assert files
    for path in files:
        data = path.read_bytes()
        path.write_bytes(data[: int(len(data) * keep)])


def test_a_fresh_vault_builds_its_index_on_first_use(vault_dir: Path) -> None:
    write(vault_dir, "semantic/plain.md", "# Quince\n\nThe quince tree.\n")
    assert not (vault_dir / ".kenomem").exists()
    vault = CoreVault.open(vault_dir)
    report = vault.sync()
    assert report.rebuilt
    assert report.indexed == 1
    assert vault.warnings == []  # nothing was lost, so nothing to warn about


def test_deleting_kenomem_entirely_loses_nothing(vault_dir: Path, known: dict[str, str]) -> None:
    shutil.rmtree(vault_dir / ".kenomem")
    all_found(CoreVault.open(vault_dir), known)


def test_deleting_only_the_index_folder_loses_nothing(
    vault_dir: Path, known: dict[str, str]
) -> None:
    shutil.rmtree(vault_dir / ".kenomem" / "index")
    vault = CoreVault.open(vault_dir)
    assert vault.sync().rebuilt
    all_found(vault, known)


@pytest.mark.parametrize("keep", [0.0, 0.5])
def test_corrupt_index_is_rebuilt_by_recall_with_a_warning(
    vault_dir: Path, known: dict[str, str], keep: float
) -> None:
    truncate_segments(vault_dir, keep)
    vault = CoreVault.open(vault_dir)
    assert ids(vault, "lighthouse") == [known["lighthouse"]]
    assert any("rebuilt the index" in w for w in vault.warnings)
    all_found(vault, known)
    # The rebuilt index is whole again: another process reads it without a warning.
    again = CoreVault.open(vault_dir)
    all_found(again, known)
    assert again.warnings == []


def test_corrupt_index_is_rebuilt_by_remember(vault_dir: Path, known: dict[str, str]) -> None:
    truncate_segments(vault_dir)
    vault = CoreVault.open(vault_dir)
    made = remember(vault, RememberRequest("The walnut tree fact", type="semantic", now=NOW))
    assert made.action == "created"
    assert (vault_dir / made.path).exists()
    fresh = CoreVault.open(vault_dir)
    assert ids(fresh, "walnut") == [made.id]
    all_found(fresh, known)


def test_corrupt_index_is_rebuilt_by_list_and_stats(vault_dir: Path, known: dict[str, str]) -> None:
    truncate_segments(vault_dir)
    assert list_memories(CoreVault.open(vault_dir), ListRequest()).total == 5
    truncate_segments(vault_dir)
    counted = stats(CoreVault.open(vault_dir))
    assert counted.memories == 6
    assert counted.by_status["archived"] == 1


def test_schema_change_means_a_rebuild(
    vault_dir: Path, known: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    newer = kenomem.vault.core.SCHEMA_VERSION + 1
    monkeypatch.setattr(kenomem.vault.core, "SCHEMA_VERSION", newer)
    monkeypatch.setattr(kenomem.index.rebuild, "SCHEMA_VERSION", newer)
    vault = CoreVault.open(vault_dir)
    assert vault.sync().rebuilt
    assert not CoreVault.open(vault_dir).sync().rebuilt
    all_found(CoreVault.open(vault_dir), known)


def test_rebuild_indexes_every_readable_file(vault_dir: Path, known: dict[str, str]) -> None:
    write(vault_dir, "semantic/broken.md", "---\ntitle: [unclosed\n---\n\nzeppelin\n")
    vault = CoreVault.open(vault_dir)
    report = vault.rebuild()
    assert report.rebuilt
    assert report.indexed == len(known)
    assert vault.engine.count() == len(known)
    assert "semantic/broken.md" in report.errors
    all_found(vault, known)


def test_rebuild_twice_gives_the_same_results(vault_dir: Path, known: dict[str, str]) -> None:
    vault = CoreVault.open(vault_dir)
    first = list_memories(vault, ListRequest(statuses=(), limit=None))
    vault.rebuild()
    vault.rebuild()
    second = list_memories(CoreVault.open(vault_dir), ListRequest(statuses=(), limit=None))
    assert sorted(m.id for m in first.memories) == sorted(m.id for m in second.memories)
    assert first.total == second.total == len(known)


@pytest.mark.parametrize("text", ["# Quince\n\nquince\n", "---\ntitle: Quince\n---\n\nquince\n"])
def test_rebuild_keeps_the_id_of_a_moved_hand_made_file(vault_dir: Path, text: str) -> None:
    write(vault_dir, "semantic/first-name.md", text)
    vault = CoreVault.open(vault_dir)
    (before,) = ids(vault, "quince")
    os.rename(vault_dir / "semantic/first-name.md", vault_dir / "semantic/second-name.md")
    assert ids(vault, "quince") == [before]
    vault.rebuild()
    assert ids(vault, "quince") == [before]
    assert ids(CoreVault.open(vault_dir), "quince") == [before]


def test_rebuild_keeps_the_access_history_of_a_plain_note(vault_dir: Path) -> None:
    # A plain note's accesses live only under .kenomem/ (its file is never rewritten);
    # `reindex` rebuilds from a state it can read, so they must not be reset.
    path = write(vault_dir, "semantic/plain.md", "# Quince\n\nThe quince tree.\n")
    for _ in range(3):
        recall(CoreVault.open(vault_dir), RecallRequest("quince", now=NOW))
    CoreVault.open(vault_dir).rebuild()
    (item,) = recall(CoreVault.open(vault_dir), RecallRequest("quince", now=NOW)).results
    assert item.access_count == 4
    assert path.read_text("utf-8") == "# Quince\n\nThe quince tree.\n"


def test_duplicate_ids_are_reported_and_one_file_is_kept(vault_dir: Path) -> None:
    text = "---\nid: mem_20260101_000000_dupe\ntitle: {title}\n---\n\n{body}\n"
    write(vault_dir, "semantic/a.md", text.format(title="Alpha", body="zeppelin alpha"))
    write(vault_dir, "semantic/b.md", text.format(title="Bravo", body="zeppelin bravo"))
    vault = CoreVault.open(vault_dir)
    results = recall(vault, RecallRequest("zeppelin", touch=False, now=NOW)).results
    assert [r.id for r in results] == ["mem_20260101_000000_dupe"]
    assert vault.last_sync is not None
    errors = vault.last_sync.errors
    (loser,) = [p for p in ("semantic/a.md", "semantic/b.md") if p in errors]
    assert "duplicate id" in errors[loser]
    assert results[0].path != loser


def test_duplicate_id_added_later_does_not_replace_the_first(vault_dir: Path) -> None:
    text = "---\nid: mem_20260101_000000_dupe\ntitle: {title}\n---\n\n{body}\n"
    write(vault_dir, "semantic/a.md", text.format(title="Alpha", body="zeppelin alpha"))
    vault = CoreVault.open(vault_dir)
    vault.sync()
    write(vault_dir, "semantic/b.md", text.format(title="Bravo", body="zeppelin bravo"))
    report = vault.sync()
    assert "duplicate id" in report.errors["semantic/b.md"]
    results = recall(vault, RecallRequest("zeppelin", touch=False, now=NOW)).results
    assert [r.path for r in results] == ["semantic/a.md"]


def test_index_size_is_reported(vault_dir: Path, known: dict[str, str]) -> None:
    assert stats(CoreVault.open(vault_dir)).index_bytes > 0
