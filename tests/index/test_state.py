"""The derived state under `.kenomem/`: what survives between commands, and what a damaged
state file costs (a rebuild, never a memory)."""

from __future__ import annotations

import marshal
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kenomem.capture.remember import RememberRequest, remember
from kenomem.forget.archive import ForgetRequest, forget
from kenomem.index import state as state_mod
from kenomem.recall.search import RecallRequest, recall
from kenomem.vault.core import CoreVault
from kenomem.vault.views import show
from tests.conftest import write

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def populated(vault_dir: Path) -> dict[str, str]:
    """A vault with a remembered fact and two hand-made notes; query word -> id."""
    vault = CoreVault.open(vault_dir)
    made = remember(
        vault, RememberRequest("The lighthouse keeper is named Ada", type="semantic", now=NOW)
    )
    write(vault_dir, "semantic/plain.md", "# Quince\n\nThe quince tree is by the gate.\n")
    write(vault_dir, "procedural/tea.md", "---\ntitle: Tea\n---\n\nBrew oolong at 90 degrees.\n")
    ids = {"lighthouse": made.id}
    for word in ("quince", "oolong"):
        (item,) = recall(vault, RecallRequest(word, touch=False, now=NOW)).results
        ids[word] = item.id
    return ids


def everything_found(vault: CoreVault, ids: dict[str, str]) -> None:
    for word, mem_id in ids.items():
        results = recall(vault, RecallRequest(word, touch=False, now=NOW)).results
        assert [r.id for r in results] == [mem_id], word


def test_a_second_process_reuses_the_state_without_reading_files(
    vault_dir: Path, populated: dict[str, str]
) -> None:
    vault = CoreVault.open(vault_dir)
    report = vault.sync()
    assert not report.rebuilt
    assert not report.changed
    assert len(vault.state) == 3


def test_state_files_exist_and_are_hidden_under_kenomem(
    vault_dir: Path, populated: dict[str, str]
) -> None:
    names = {p.name for p in (vault_dir / ".kenomem").iterdir()}
    assert {state_mod.META_NAME, state_mod.STATS_NAME, state_mod.RECORDS_NAME, "index"} <= names


@pytest.mark.parametrize("damage", ["garbage", "empty", "missing", "other format"])
def test_damaged_meta_means_a_rebuild(
    vault_dir: Path, populated: dict[str, str], damage: str
) -> None:
    path = vault_dir / ".kenomem" / state_mod.META_NAME
    if damage == "garbage":
        path.write_bytes(b"\x00not marshal at all\xff" * 10)
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "missing":
        path.unlink()
    else:
        data = marshal.loads(path.read_bytes())
        data["format"] = state_mod.FORMAT + 100
        path.write_bytes(marshal.dumps(data))

    vault = CoreVault.open(vault_dir)
    assert vault.sync().rebuilt
    everything_found(CoreVault.open(vault_dir), populated)


@pytest.mark.parametrize("damage", ["garbage", "missing", "other save"])
def test_damaged_stats_mean_a_rebuild(
    vault_dir: Path, populated: dict[str, str], damage: str
) -> None:
    path = vault_dir / ".kenomem" / state_mod.STATS_NAME
    if damage == "garbage":
        path.write_bytes(b"garbage")
    elif damage == "missing":
        path.unlink()
    else:  # a crash between the writes of one save leaves parts of two generations
        generation, stats = marshal.loads(path.read_bytes())
        path.write_bytes(marshal.dumps((generation - 1, stats)))
    vault = CoreVault.open(vault_dir)
    assert vault.sync().rebuilt
    assert any("rebuilt the index" in w for w in vault.warnings)
    everything_found(CoreVault.open(vault_dir), populated)


def damage_records(vault_dir: Path, damage: str) -> None:
    path = vault_dir / ".kenomem" / state_mod.RECORDS_NAME
    if damage == "garbage":
        path.write_bytes(b"garbage")
    else:
        path.unlink()


@pytest.mark.parametrize("damage", ["garbage", "missing"])
def test_damaged_records_bin_means_a_rebuild_for_recall(
    vault_dir: Path, populated: dict[str, str], damage: str
) -> None:
    damage_records(vault_dir, damage)
    # A hand edit makes the sync read the records.
    write(vault_dir, "semantic/new.md", "# Walnut\n\nThe walnut is ripe.\n")
    vault = CoreVault.open(vault_dir)
    assert len(recall(vault, RecallRequest("walnut", touch=False, now=NOW)).results) == 1
    everything_found(vault, populated)


@pytest.mark.parametrize("damage", ["garbage", "missing"])
def test_damaged_records_bin_means_a_rebuild_for_show_and_forget(
    vault_dir: Path, populated: dict[str, str], damage: str
) -> None:
    damage_records(vault_dir, damage)
    vault = CoreVault.open(vault_dir)
    assert show(vault, populated["lighthouse"]).memory.title.startswith("The lighthouse")
    result = forget(CoreVault.open(vault_dir), ForgetRequest(populated["quince"]))
    assert result.path == "archive/semantic/plain.md"


def test_damaged_journal_is_ignored(vault_dir: Path, populated: dict[str, str]) -> None:
    vault = CoreVault.open(vault_dir)
    (first,) = recall(vault, RecallRequest("quince", now=NOW)).results
    assert first.access_count == 1
    with open(vault_dir / ".kenomem" / state_mod.JOURNAL_NAME, "ab") as handle:
        handle.write(b'["semantic/plain.md", 1, 2, "torn')  # a torn last line
    (second,) = recall(CoreVault.open(vault_dir), RecallRequest("quince", now=NOW)).results
    assert second.access_count == 2
    everything_found(CoreVault.open(vault_dir), populated)


def test_journal_in_binary_garbage_is_ignored(vault_dir: Path, populated: dict[str, str]) -> None:
    (vault_dir / ".kenomem" / state_mod.JOURNAL_NAME).write_bytes(b"\xff\xfe\x00garbage\n")
    vault = CoreVault.open(vault_dir)
    assert not vault.sync().rebuilt
    everything_found(vault, populated)


def test_access_of_a_plain_note_survives_across_processes(
    vault_dir: Path, populated: dict[str, str]
) -> None:
    plain = vault_dir / "semantic/plain.md"
    before = plain.read_bytes()
    for expected in (1, 2, 3):
        later = NOW + timedelta(hours=expected)
        (item,) = recall(CoreVault.open(vault_dir), RecallRequest("quince", now=later)).results
        assert item.access_count == expected
        assert item.last_accessed == later
    assert plain.read_bytes() == before


def test_a_later_write_folds_the_journal_into_the_state(
    vault_dir: Path, populated: dict[str, str]
) -> None:
    recall(CoreVault.open(vault_dir), RecallRequest("quince", now=NOW))
    journal = vault_dir / ".kenomem" / state_mod.JOURNAL_NAME
    assert journal.exists()
    write(vault_dir, "semantic/other.md", "# Other\n\nsomething else\n")
    CoreVault.open(vault_dir).sync()
    assert not journal.exists()
    (item,) = recall(CoreVault.open(vault_dir), RecallRequest("quince", now=NOW)).results
    assert item.access_count == 2


def test_state_load_of_nothing_is_none(tmp_path: Path) -> None:
    assert state_mod.load(tmp_path / "nowhere") is None


def test_state_round_trip_keeps_records_errors_and_access(tmp_path: Path) -> None:
    state = state_mod.State(schema=1, engine="whoosh")
    state.put("semantic/a.md", state_mod.FileRecord(10, 123, "d1", "mem_a", "", 5.0, 2))
    state.put("semantic/b.md", state_mod.FileRecord(20, 456, "d2", "", "line 3: bad"))
    state_mod.save(tmp_path, state)
    loaded = state_mod.load(tmp_path)
    assert loaded is not None
    assert loaded.get("semantic/a.md") == state_mod.FileRecord(10, 123, "d1", "mem_a", "", 5.0, 2)
    assert loaded.get("semantic/b.md") == state_mod.FileRecord(20, 456, "d2", "", "line 3: bad")
    assert loaded.ids() == {"mem_a": "semantic/a.md"}
    assert loaded.errors == {"semantic/b.md": "line 3: bad"}


# -- the journal: written and read in state.py alone ---------------------------------------


def test_the_journal_keeps_writes_and_touches_until_a_save_folds_it_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = state_mod.State(schema=1, engine="whoosh")
    state_mod.save(tmp_path, state)
    made = state_mod.FileRecord(10, 111, "d1", "mem_a")
    state_mod.record_writes(tmp_path, state, [("semantic/a.md", made)])
    touched = state_mod.FileRecord(12, 222, "d2", "mem_a", "", 5.0, 1)
    state_mod.journal_rewrite(tmp_path, "semantic/a.md", touched)  # before its rename
    assert state_mod.journaled_rewrites(tmp_path) == {"semantic/a.md": (12, 222)}
    state_mod.record_touches(
        tmp_path, state, [("semantic/a.md", touched)], [("semantic/b.md", 6.0, 3)]
    )
    loaded = state_mod.load(tmp_path)
    assert loaded is not None and loaded.journal_lines == state.journal_lines == 3
    assert loaded.get("semantic/a.md") == touched
    assert loaded.accessed("semantic/b.md", 0.0, 0) == (6.0, 3)
    journal = tmp_path / state_mod.JOURNAL_NAME
    monkeypatch.setattr(state_mod, "JOURNAL_FOLD_LINES", 5)
    state_mod.record_touches(tmp_path, loaded, [], [("semantic/b.md", 7.0, 4)])
    assert journal.exists() and loaded.journal_lines == 4
    state_mod.record_touches(tmp_path, loaded, [], [("semantic/b.md", 8.0, 5)])
    assert not journal.exists() and loaded.journal_lines == 0  # folded into the state
    again = state_mod.load(tmp_path)
    assert again is not None and again.accessed("semantic/b.md", 0.0, 0) == (8.0, 5)
    assert again.get("semantic/a.md") == touched


def test_only_the_state_module_reads_or_writes_the_journal() -> None:
    import ast

    package = Path(state_mod.__file__).resolve().parent.parent
    private = {
        "append_journal",
        "note_write",
        "note_access",
        "journal_lines",
        "JOURNAL_NAME",
        "JOURNAL_FOLD_LINES",
        "_rewrite_line",
        "_apply_journal",
    }
    offenders = []
    for path in sorted(package.rglob("*.py")):
        if path == Path(state_mod.__file__).resolve():
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            name = getattr(node, "attr", None) or getattr(node, "id", None)
            if name in private:
                offenders.append(f"{path.relative_to(package)}:{node.lineno} {name}")
    assert not offenders, offenders
