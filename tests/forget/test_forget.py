"""`forget`: archive a memory (kept, found with --archive) or delete it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from kenomem.capture.remember import RememberRequest, remember
from kenomem.errors import KenomemError, MemoryNotFound
from kenomem.forget.archive import ForgetRequest, forget
from kenomem.recall.search import RecallItem, RecallRequest, recall
from kenomem.vault.core import CoreVault
from kenomem.vault.views import ListRequest, list_memories, show, stats
from tests.conftest import write

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def found(vault: CoreVault, query: str, archive: bool = False) -> list[RecallItem]:
    request = RecallRequest(query, touch=False, now=NOW, archive=archive)
    return recall(vault, request).results


def meta_of(path: Path) -> dict[str, object]:
    return yaml.load(path.read_text("utf-8").split("---\n")[1], Loader=yaml.BaseLoader)


@pytest.fixture
def kept(vault_dir: Path) -> str:
    """An ordinary memory that no forgetting may touch."""
    made = remember(
        CoreVault.open(vault_dir), RememberRequest("The kettle is blue", type="semantic", now=NOW)
    )
    return made.id


def test_archive_moves_the_file_and_marks_it(vault_dir: Path, vault: CoreVault, kept: str) -> None:
    made = remember(vault, RememberRequest("The lighthouse is red", type="semantic", now=NOW))
    result = forget(vault, ForgetRequest(made.id))
    assert result.action == "archived"
    assert (result.id, result.old_path) == (made.id, made.path)
    assert result.path == "archive/" + made.path
    assert not (vault_dir / made.path).exists()
    archived = vault_dir / result.path
    meta = meta_of(archived)
    assert (meta["id"], meta["status"]) == (made.id, "archived")
    assert "The lighthouse is red" in archived.read_text("utf-8")

    assert found(vault, "lighthouse") == []
    (item,) = found(vault, "lighthouse", archive=True)
    assert (item.id, item.path, item.status) == (made.id, result.path, "archived")
    fresh = CoreVault.open(vault_dir)
    assert found(fresh, "lighthouse") == []
    assert [i.id for i in found(fresh, "kettle")] == [kept]


def test_archive_by_prefix(vault: CoreVault) -> None:
    made = remember(vault, RememberRequest("The lighthouse is red", type="semantic", now=NOW))
    assert forget(vault, ForgetRequest(made.id.removeprefix("mem_")[:-1])).id == made.id


def test_archive_keeps_the_rest_of_the_file(vault_dir: Path, vault: CoreVault) -> None:
    text = (
        "---\n# mine\nid: mem_20260101_000000_abcd\ntitle: Lighthouse   # t\nmood: calm\n"
        "status: active\n---\n\nThe lighthouse is red.\n"
    )
    write(vault_dir, "semantic/lh.md", text)
    result = forget(vault, ForgetRequest("mem_20260101_000000_abcd"))
    archived = (vault_dir / result.path).read_text("utf-8")
    assert archived == text.replace("status: active", "status: archived")


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: Lighthouse\ntags: [sea]\n---\n\nThe lighthouse is red.\n",
        "# Lighthouse\n\nThe lighthouse is red.\n",
    ],
    ids=["frontmatter-without-id", "no-frontmatter"],
)
def test_archive_keeps_the_id_of_a_hand_made_file(
    vault_dir: Path, vault: CoreVault, kept: str, text: str
) -> None:
    write(vault_dir, "semantic/lighthouse.md", text)
    (before,) = found(vault, "lighthouse")
    result = forget(vault, ForgetRequest(before.id))
    assert result.id == before.id
    assert result.path == "archive/semantic/lighthouse.md"
    assert found(vault, "lighthouse") == []
    for v in (vault, CoreVault.open(vault_dir)):
        (after,) = found(v, "lighthouse", archive=True)
        assert (after.id, after.path, after.status) == (before.id, result.path, "archived")
        assert show(v, before.id).memory.path == result.path
    archived = (vault_dir / result.path).read_text("utf-8")
    assert "The lighthouse is red." in archived
    if not text.startswith("---"):
        assert archived == text  # a plain note is moved, never given YAML


def test_archive_of_a_hand_made_file_survives_a_rebuild(vault_dir: Path, vault: CoreVault) -> None:
    write(vault_dir, "semantic/lighthouse.md", "---\ntitle: LH\n---\n\nThe lighthouse.\n")
    (before,) = found(vault, "lighthouse")
    forget(vault, ForgetRequest(before.id))
    vault.rebuild()
    (after,) = found(CoreVault.open(vault_dir), "lighthouse", archive=True)
    assert after.id == before.id


def test_forgetting_an_archived_memory_again_is_an_error(vault_dir: Path, vault: CoreVault) -> None:
    made = remember(vault, RememberRequest("The lighthouse is red", type="semantic", now=NOW))
    first = forget(vault, ForgetRequest(made.id))
    before = (vault_dir / first.path).read_bytes()
    with pytest.raises(KenomemError) as caught:
        forget(CoreVault.open(vault_dir), ForgetRequest(made.id))
    assert "archive" in caught.value.message
    assert (vault_dir / first.path).read_bytes() == before
    assert len(list((vault_dir / "archive").rglob("*.md"))) == 1


def test_archive_never_overwrites_an_archived_file(vault_dir: Path, vault: CoreVault) -> None:
    one = "---\nid: mem_20260101_000000_0001\ntitle: LH\n---\n\nThe first lighthouse.\n"
    two = "---\nid: mem_20260101_000000_0002\ntitle: LH\n---\n\nThe second lighthouse.\n"
    write(vault_dir, "semantic/lh.md", one)
    first = forget(vault, ForgetRequest("mem_20260101_000000_0001"))
    write(vault_dir, "semantic/lh.md", two)
    second = forget(vault, ForgetRequest("mem_20260101_000000_0002"))
    assert first.path != second.path
    assert "first lighthouse" in (vault_dir / first.path).read_text("utf-8")
    assert "second lighthouse" in (vault_dir / second.path).read_text("utf-8")
    assert len(found(vault, "lighthouse", archive=True)) == 2


def test_forget_an_unknown_id(vault_dir: Path, vault: CoreVault, kept: str) -> None:
    with pytest.raises(MemoryNotFound):
        forget(vault, ForgetRequest("mem_19990101"))
    assert list((vault_dir / "archive").rglob("*.md")) == []


def test_delete_removes_the_file_and_the_index_entry(
    vault_dir: Path, vault: CoreVault, kept: str
) -> None:
    made = remember(vault, RememberRequest("The lighthouse is red", type="semantic", now=NOW))
    result = forget(vault, ForgetRequest(made.id, delete=True))
    assert (result.action, result.path, result.old_path) == ("deleted", "", made.path)
    assert not (vault_dir / made.path).exists()
    assert list((vault_dir / "archive").rglob("*.md")) == []
    assert found(vault, "lighthouse", archive=True) == []
    assert vault.engine.lookup([made.id]) == {}
    with pytest.raises(MemoryNotFound):
        show(CoreVault.open(vault_dir), made.id)
    assert stats(vault).memories == 1
    assert [m.id for m in list_memories(vault, ListRequest(statuses=())).memories] == [kept]


def test_delete_an_archived_memory(vault_dir: Path, vault: CoreVault, kept: str) -> None:
    made = remember(vault, RememberRequest("The lighthouse is red", type="semantic", now=NOW))
    archived = forget(vault, ForgetRequest(made.id))
    deleted = forget(vault, ForgetRequest(made.id, delete=True))
    assert deleted.old_path == archived.path
    assert not (vault_dir / archived.path).exists()
    assert found(vault, "lighthouse", archive=True) == []


def test_delete_a_plain_note(vault_dir: Path, vault: CoreVault, kept: str) -> None:
    path = write(vault_dir, "semantic/lighthouse.md", "# Lighthouse\n\nThe lighthouse.\n")
    (item,) = found(vault, "lighthouse")
    forget(vault, ForgetRequest(item.id, delete=True))
    assert not path.exists()
    assert found(CoreVault.open(vault_dir), "lighthouse", archive=True) == []
