"""Recall strengthens what it returns, several files at once, and never overwrites an edit
saved since the file was indexed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from kenomem.files import store
from kenomem.recall import touch
from kenomem.vault.core import CoreVault
from tests.conftest import write
from tests.recall.helpers import memory_file


def _three(vault_dir: Path) -> None:
    for name in ("a", "b", "c"):
        text = memory_file(f"mem_{name}", f"Note {name}", f"The heron {name} stood still.")
        write(vault_dir, f"semantic/{name}.md", text.replace("---\n", "---\n# mine\n", 1))


@pytest.fixture(params=["threads", "one after another"])
def write_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways the writes are made: in threads (a slow disk), in turn (a quick one)."""
    threshold = 0.0 if request.param == "threads" else float("inf")
    monkeypatch.setattr(touch, "_SERIAL_BELOW_SECONDS", threshold)
    return str(request.param)


def test_every_result_is_touched(vault_dir: Path, write_mode: str) -> None:
    _three(vault_dir)
    vault = CoreVault.open(vault_dir)
    from kenomem.recall.search import RecallRequest, recall

    found = recall(vault, RecallRequest("heron"))
    assert sorted(item.id for item in found.results) == ["mem_a", "mem_b", "mem_c"]
    for name in ("a", "b", "c"):
        text = (vault_dir / "semantic" / f"{name}.md").read_text("utf-8")
        assert "access_count: 1" in text and text.startswith("---\n# mine\n")
    journal = (vault_dir / ".kenomem" / "journal").read_text("utf-8").splitlines()
    rewrites = [line for line in journal if line.startswith('["r"')]
    assert len(rewrites) == 3  # each touch journaled once, before its rename


def test_an_edit_saved_since_indexing_is_left_alone_and_the_rest_touched(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, write_mode: str
) -> None:
    _three(vault_dir)
    vault = CoreVault.open(vault_dir)
    vault.sync()
    docs = vault.engine.lookup(["mem_a", "mem_b", "mem_c"])
    edited = vault_dir / "semantic" / "b.md"
    mine = edited.read_text("utf-8").replace("stood still", "flew off")
    edited.write_text(mine, "utf-8")  # saved after indexing, before the touch
    from datetime import UTC, datetime

    touched = touch.touch_all(
        vault, [(docs[i], 1) for i in ("mem_a", "mem_b", "mem_c")], datetime.now(UTC)
    )
    assert touched == [True, False, True]
    journal = (vault_dir / ".kenomem" / "journal").read_text("utf-8")
    assert "semantic/a.md" in journal and "semantic/c.md" in journal
    assert "semantic/b.md" not in journal
    assert edited.read_text("utf-8") == mine
    assert any("not touched" in w and "b.md" in w for w in vault.warnings)
    assert "access_count: 1" in (vault_dir / "semantic" / "c.md").read_text("utf-8")


def test_an_unexpected_error_in_a_writer_thread_reaches_the_caller(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, write_mode: str
) -> None:
    _three(vault_dir)
    vault = CoreVault.open(vault_dir)
    vault.sync()
    docs = vault.engine.lookup(["mem_a", "mem_b"])

    def broken(*args: object, **kwargs: object) -> store.Written:
        raise RuntimeError("a bug")

    monkeypatch.setattr(store, "update_keys", broken)
    from datetime import UTC, datetime

    with pytest.raises(RuntimeError, match="a bug"):
        touch.touch_all(vault, [(d, 1) for d in docs.values()], datetime.now(UTC))


# -- files a touch leaves as they are: the access is kept in the state instead ------------


def recalled_counts(vault_dir: Path, query: str = "heron") -> list[tuple[str, int]]:
    from kenomem.recall.search import RecallRequest, recall

    found = recall(CoreVault.open(vault_dir), RecallRequest(query))
    return [(item.path, item.access_count) for item in found.results]


def test_a_symlink_inside_the_vault_is_read_but_never_replaced(vault_dir: Path) -> None:
    real = write(vault_dir, "notes/heron.md", memory_file("mem_h", "Heron", "The heron waits."))
    link = vault_dir / "semantic" / "heron.md"
    link.symlink_to("../notes/heron.md")
    before = real.read_bytes()
    for n in (1, 2):
        assert recalled_counts(vault_dir) == [("semantic/heron.md", n)]
    assert link.is_symlink() and os.readlink(link) == "../notes/heron.md"
    assert real.read_bytes() == before


def test_a_file_its_owner_made_read_only_is_not_rewritten(vault_dir: Path) -> None:
    path = write(vault_dir, "semantic/heron.md", memory_file("mem_h", "Heron", "The heron waits."))
    path.chmod(0o444)
    before = path.read_bytes()
    for n in (1, 2):
        assert recalled_counts(vault_dir) == [("semantic/heron.md", n)]
    assert path.read_bytes() == before
    assert stat.S_IMODE(path.stat().st_mode) == 0o444


@pytest.mark.parametrize("value", ["[a, b]", "{a: b}", "'   '"])
def test_a_hand_written_id_kenomem_cannot_read_is_never_replaced(
    vault_dir: Path, value: str
) -> None:
    text = f"---\nid: {value}\ntitle: Heron\n---\n\nThe heron waits.\n"
    path = write(vault_dir, "semantic/heron.md", text)
    for n in (1, 2):
        assert recalled_counts(vault_dir) == [("semantic/heron.md", n)]
    assert path.read_text("utf-8") == text


def test_an_id_left_empty_is_filled_in(vault_dir: Path) -> None:
    path = write(vault_dir, "semantic/heron.md", "---\nid:\ntitle: Heron\n---\n\nThe heron.\n")
    assert recalled_counts(vault_dir) == [("semantic/heron.md", 1)]
    text = path.read_text("utf-8")
    assert text.startswith("---\nid: note_") and "access_count: 1" in text


def test_a_write_never_goes_through_a_symlink_nor_over_a_read_only_file(vault_dir: Path) -> None:
    from kenomem.errors import UnsafePath

    real = write(vault_dir, "notes/heron.md", memory_file("mem_h", "Heron", "The heron waits."))
    (vault_dir / "semantic" / "heron.md").symlink_to("../notes/heron.md")
    with pytest.raises(UnsafePath, match="symlink"):
        store.update_keys(vault_dir, "semantic/heron.md", {"importance": 9})
    real.chmod(0o400)
    with pytest.raises(UnsafePath, match="read-only"):
        store.update_keys(vault_dir, "notes/heron.md", {"importance": 9})
    assert "importance: 5" in real.read_text("utf-8")
