"""`init`: a vault from the template; an existing file is never overwritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenomem.capture.remember import RememberRequest, remember
from kenomem.errors import KenomemError
from kenomem.files.paths import MEMORY_DIRS
from kenomem.recall.search import RecallRequest, recall
from kenomem.vault.core import CoreVault
from kenomem.vault.init import init_vault, template_dir
from tests.conftest import TEMPLATE


def template_files() -> dict[str, bytes]:
    return {
        p.relative_to(TEMPLATE).as_posix(): p.read_bytes()
        for p in TEMPLATE.rglob("*")
        if p.is_file()
    }


def test_init_creates_the_layout_from_the_template(tmp_path: Path) -> None:
    target = tmp_path / "new" / "vault"
    result = init_vault(target)
    assert Path(result.path) == target
    assert result.kept == []
    expected = template_files()
    assert sorted(result.created) == sorted(expected)
    for rel, data in expected.items():
        assert (target / rel).read_bytes() == data, rel
    for folder in (*MEMORY_DIRS, "buffer"):
        assert (target / folder).is_dir(), folder
    assert {"kenomem.toml", "foundation.md", "README.md", ".gitignore"} <= set(result.created)
    assert ".kenomem" in (target / ".gitignore").read_text("utf-8")


def test_template_dir_is_the_repository_template() -> None:
    assert template_dir().resolve() == TEMPLATE.resolve()


def test_a_new_vault_works(tmp_path: Path) -> None:
    target = tmp_path / "vault"
    init_vault(target)
    vault = CoreVault.open(target)
    made = remember(vault, RememberRequest("The kiln fires at 1200 degrees", type="semantic"))
    found = recall(vault, RecallRequest("kiln", touch=False)).results
    assert [r.id for r in found] == [made.id]


def test_init_again_keeps_what_the_user_changed(tmp_path: Path) -> None:
    target = tmp_path / "vault"
    init_vault(target)
    toml = b"[recall]\nlimit = 3  # mine\n"
    foundation = b"# My foundation\n\nBe kind.\n"
    (target / "kenomem.toml").write_bytes(toml)
    (target / "foundation.md").write_bytes(foundation)
    note = target / "semantic" / "note.md"
    note.write_bytes(b"# Note\n\nkept\n")

    again = init_vault(target)
    assert again.created == []
    assert {"kenomem.toml", "foundation.md"} <= set(again.kept)
    assert sorted(again.kept) == sorted(template_files())
    assert (target / "kenomem.toml").read_bytes() == toml
    assert (target / "foundation.md").read_bytes() == foundation
    assert note.read_bytes() == b"# Note\n\nkept\n"


def test_init_restores_only_what_is_missing(tmp_path: Path) -> None:
    target = tmp_path / "vault"
    init_vault(target)
    (target / "foundation.md").write_bytes(b"mine\n")
    (target / "README.md").unlink()
    result = init_vault(target)
    assert result.created == ["README.md"]
    assert "foundation.md" in result.kept
    assert (target / "foundation.md").read_bytes() == b"mine\n"
    assert (target / "README.md").read_bytes() == (TEMPLATE / "README.md").read_bytes()


def test_init_into_a_folder_with_other_files(tmp_path: Path) -> None:
    target = tmp_path / "notes"
    target.mkdir()
    (target / "kenomem.toml").write_bytes(b"# someone else's\n")
    (target / "todo.txt").write_bytes(b"buy milk\n")
    result = init_vault(target)
    assert "kenomem.toml" in result.kept
    assert "kenomem.toml" not in result.created
    assert (target / "kenomem.toml").read_bytes() == b"# someone else's\n"
    assert (target / "todo.txt").read_bytes() == b"buy milk\n"
    assert (target / "foundation.md").is_file()


def test_init_keeps_a_dangling_symlink(tmp_path: Path) -> None:
    target = tmp_path / "vault"
    target.mkdir()
    (target / "foundation.md").symlink_to(tmp_path / "nowhere.md")
    result = init_vault(target)
    assert "foundation.md" in result.kept
    assert not (tmp_path / "nowhere.md").exists()


def test_init_over_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "vault"
    target.write_bytes(b"not a folder\n")
    with pytest.raises(KenomemError):
        init_vault(target)
    assert target.read_bytes() == b"not a folder\n"


def test_init_writes_nothing_through_a_memory_folder_linked_out_of_the_vault(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    target = tmp_path / "vault"
    target.mkdir()
    (target / "semantic").symlink_to(outside, target_is_directory=True)
    result = init_vault(target)
    assert list(outside.iterdir()) == []
    assert "semantic/.gitkeep" in result.kept and "kenomem.toml" in result.created
