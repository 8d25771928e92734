"""`edit`: open a memory in an editor (here a small script), then index what was saved."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kenomem.capture.edit import edit, editor_command
from kenomem.capture.remember import RememberRequest, remember
from kenomem.errors import EditorFailed, MemoryNotFound
from kenomem.recall.search import RecallRequest, recall
from kenomem.vault.core import CoreVault

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

REPLACE_SCRIPT = """\
import sys
path = sys.argv[-1]
with open(path, encoding="utf-8") as handle:
    text = handle.read()
with open(path, "w", encoding="utf-8") as handle:
    handle.write(text.replace(sys.argv[1], sys.argv[2]))
"""


def editor(tmp_path: Path, source: str, *args: str) -> list[str]:
    script = tmp_path / "fake_editor.py"
    script.write_text(source, encoding="utf-8")
    return [sys.executable, str(script), *args]


def ids(vault: CoreVault, query: str) -> list[str]:
    return [r.id for r in recall(vault, RecallRequest(query, touch=False, now=NOW)).results]


@pytest.fixture
def made(vault: CoreVault) -> str:
    return remember(
        vault, RememberRequest("The boathouse key hangs by the door", type="semantic", now=NOW)
    ).id


def test_edited_text_is_found_by_the_next_recall(
    vault_dir: Path, vault: CoreVault, made: str, tmp_path: Path
) -> None:
    command = editor(tmp_path, REPLACE_SCRIPT, "hangs by the door", "sits in the blue drawer")
    result = edit(vault, made[:12], command)
    assert (result.id, result.changed) == (made, True)
    assert result.sync.updated == 1
    assert ids(vault, "drawer") == [made]
    assert ids(CoreVault.open(vault_dir), "drawer") == [made]
    text = (vault_dir / result.path).read_text("utf-8")
    assert "sits in the blue drawer" in text
    assert f"id: {made}\n" in text


def test_editor_that_changes_nothing(
    vault_dir: Path, vault: CoreVault, made: str, tmp_path: Path
) -> None:
    command = editor(tmp_path, "import sys\n")
    path = vault_dir / vault.resolve_id(made)[1]
    before = path.read_bytes()
    result = edit(vault, made, command)
    assert not result.changed
    assert not result.sync.changed
    assert path.read_bytes() == before


def test_editor_that_breaks_the_yaml_is_reported_and_not_rewritten(
    vault_dir: Path, vault: CoreVault, made: str, tmp_path: Path
) -> None:
    command = editor(tmp_path, REPLACE_SCRIPT, "tags: []", "tags: [unclosed")
    result = edit(vault, made, command)
    assert result.changed
    assert result.path in result.sync.errors
    broken = (vault_dir / result.path).read_bytes()
    assert ids(vault, "boathouse") == []
    recall(vault, RecallRequest("boathouse", now=NOW))
    assert (vault_dir / result.path).read_bytes() == broken


def test_editor_that_fails_is_reported(
    vault_dir: Path, vault: CoreVault, made: str, tmp_path: Path
) -> None:
    command = editor(tmp_path, "import sys\nsys.exit(3)\n")
    path = vault_dir / vault.resolve_id(made)[1]
    before = path.read_bytes()
    with pytest.raises(EditorFailed) as caught:
        edit(vault, made, command)
    assert "3" in caught.value.message
    assert path.read_bytes() == before
    assert ids(vault, "boathouse") == [made]


def test_missing_editor_is_reported(vault: CoreVault, made: str, tmp_path: Path) -> None:
    with pytest.raises(EditorFailed) as caught:
        edit(vault, made, [str(tmp_path / "no-such-editor")])
    assert "no-such-editor" in caught.value.message


def test_edit_of_an_unknown_id(vault: CoreVault, made: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    command = editor(tmp_path, f"open({str(marker)!r}, 'w').close()\n")
    with pytest.raises(MemoryNotFound):
        edit(vault, "mem_19990101", command)
    assert not marker.exists()


def test_editor_command_comes_from_visual_then_editor(monkeypatch: pytest.MonkeyPatch) -> None:
    assert editor_command() == ["vi"]
    monkeypatch.setenv("EDITOR", "nano -w")
    assert editor_command() == ["nano", "-w"]
    monkeypatch.setenv("VISUAL", "code --wait")
    assert editor_command() == ["code", "--wait"]
