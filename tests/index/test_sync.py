"""Hand edits reach the index at the next command, with no watcher running."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kenomem.files.memory
import kenomem.index.sync
from kenomem.errors import MemoryNotFound
from kenomem.recall.search import RecallItem, RecallRequest, recall
from kenomem.vault.core import CoreVault
from kenomem.vault.views import show, stats
from tests.conftest import write

pytestmark = pytest.mark.both_engines  # each test runs on Whoosh and on tantivy

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def found(vault: CoreVault, query: str, **kw: object) -> list[RecallItem]:
    request = RecallRequest(query, limit=50, touch=False, now=NOW, **kw)  # type: ignore[arg-type]
    return recall(vault, request).results


def ids(vault: CoreVault, query: str, **kw: object) -> list[str]:
    return [item.id for item in found(vault, query, **kw)]


def bump_mtime(path: Path, seconds: int = 5) -> None:
    """Move the file's mtime forward, so a change is visible whatever the clock tick."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 1_000_000_000))


WITH_ID = """---
id: mem_20260101_090000_aaaa
title: Pet notes
tags: [animals]
---

The alpaca sleeps in the barn.
"""

WITHOUT_ID = """---
title: Pet notes
tags: [animals]
---

The alpaca sleeps in the barn.
"""

NO_FRONTMATTER = """# Pet notes

The alpaca sleeps in the barn.
"""


@pytest.fixture
def filler(vault_dir: Path) -> Path:
    """One ordinary memory that must stay searchable whatever else happens."""
    return write(vault_dir, "semantic/kettle.md", "# Kettle\n\nThe kettle is descaled monthly.\n")


# -- edits, new files, deletions --------------------------------------------------------


@pytest.mark.parametrize("text", [WITH_ID, WITHOUT_ID, NO_FRONTMATTER])
def test_edit_in_place_with_the_same_size_is_seen(
    vault_dir: Path, vault: CoreVault, text: str
) -> None:
    path = write(vault_dir, "semantic/pets.md", text)
    (before,) = ids(vault, "alpaca")
    size = path.stat().st_size
    path.write_text(text.replace("alpaca", "walrus"), encoding="utf-8")
    assert path.stat().st_size == size
    bump_mtime(path)

    fresh = CoreVault.open(vault_dir)
    assert ids(fresh, "walrus") == [before]
    assert ids(fresh, "alpaca") == []


def test_same_size_edit_in_the_same_mtime_tick_as_the_sync_is_seen(
    vault_dir: Path, vault: CoreVault
) -> None:
    # A file saved again within the file system's timestamp granularity of the sync that
    # indexed it keeps its (size, mtime): the content must still be checked.
    path = write(vault_dir, "semantic/pets.md", NO_FRONTMATTER)
    assert len(ids(vault, "alpaca")) == 1
    st = path.stat()
    path.write_text(NO_FRONTMATTER.replace("alpaca", "walrus"), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))

    fresh = CoreVault.open(vault_dir)
    assert len(ids(fresh, "walrus")) == 1
    assert ids(fresh, "alpaca") == []


def test_edit_of_the_frontmatter_is_seen(vault_dir: Path, vault: CoreVault) -> None:
    path = write(vault_dir, "semantic/pets.md", WITH_ID)
    assert found(vault, "alpaca")[0].tags == ["animals"]
    path.write_text(WITH_ID.replace("[animals]", "[animals, farm]"), encoding="utf-8")
    bump_mtime(path)

    (item,) = found(CoreVault.open(vault_dir), "alpaca", tags=("farm",))
    assert item.tags == ["animals", "farm"]


def test_new_hand_written_file_is_seen(vault_dir: Path, vault: CoreVault, filler: Path) -> None:
    assert ids(vault, "alpaca") == []
    write(vault_dir, "procedural/pets.md", NO_FRONTMATTER)
    (item,) = found(vault, "alpaca")
    assert item.path == "procedural/pets.md"
    assert item.type == "procedural"
    assert item.title == "Pet notes"


def test_deleted_file_is_gone(vault_dir: Path, vault: CoreVault, filler: Path) -> None:
    path = write(vault_dir, "semantic/pets.md", WITH_ID)
    assert ids(vault, "alpaca") == ["mem_20260101_090000_aaaa"]
    path.unlink()

    assert ids(vault, "alpaca") == []
    with pytest.raises(MemoryNotFound):
        show(vault, "mem_20260101_090000_aaaa")
    assert len(ids(vault, "kettle")) == 1


def test_file_written_since_the_last_save_then_deleted_is_gone(
    vault_dir: Path, vault: CoreVault
) -> None:
    """`remember` records its file in the state's journal, not in the saved stats that the
    background scanner compares with: a hand deletion of that file must still be seen."""
    from kenomem.capture.remember import RememberRequest, remember

    made = remember(vault, RememberRequest("Went to the alpaca market", type="episodic", now=NOW))
    remember(vault, RememberRequest("Bought a kettle at the shop", type="episodic", now=NOW))
    (vault_dir / made.path).unlink()

    fresh = CoreVault.open(vault_dir)  # the next command, with the scanner beside it
    assert ids(fresh, "alpaca") == []
    assert len(ids(fresh, "kettle")) == 1


@pytest.mark.parametrize("text", [WITH_ID, WITHOUT_ID, NO_FRONTMATTER])
@pytest.mark.parametrize(
    "target", ["semantic/animals/farm-pets.md", "semantic/renamed.md", "procedural/pets.md"]
)
def test_rename_or_move_keeps_the_id(
    vault_dir: Path, vault: CoreVault, filler: Path, text: str, target: str
) -> None:
    path = write(vault_dir, "semantic/pets.md", text)
    (before,) = found(vault, "alpaca")
    assert before.path == "semantic/pets.md"
    dest = vault_dir / target
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.rename(path, dest)

    (after,) = found(vault, "alpaca")
    assert after.id == before.id
    assert after.path == target
    assert show(vault, before.id).memory.path == target
    assert dest.read_text(encoding="utf-8") == text  # the move alone writes nothing


def test_move_is_reported_as_a_move(vault_dir: Path, vault: CoreVault, filler: Path) -> None:
    path = write(vault_dir, "semantic/pets.md", NO_FRONTMATTER)
    vault.sync()
    os.rename(path, vault_dir / "semantic/renamed.md")
    report = vault.sync()
    assert (report.moved, report.added, report.removed) == (1, 0, 0)


def test_sync_report_counts_each_kind_of_change(vault_dir: Path, vault: CoreVault) -> None:
    edited = write(vault_dir, "semantic/edited.md", "# Edited\n\nfirst words\n")
    gone = write(vault_dir, "semantic/gone.md", "# Gone\n\nsoon deleted\n")
    first = vault.sync()
    assert first.indexed == 2
    edited.write_text("# Edited\n\nsecond version, longer\n", encoding="utf-8")
    bump_mtime(edited)
    gone.unlink()
    write(vault_dir, "episodic/new.md", "# New\n\nfresh\n")

    report = vault.sync()
    assert (report.added, report.updated, report.removed, report.moved) == (1, 1, 1, 0)
    assert report.changed
    assert report.indexed == 2
    again = vault.sync()
    assert not again.changed


# -- same bytes, new mtime ---------------------------------------------------------------


def test_new_mtime_with_the_same_bytes_changes_nothing_but_the_stat(
    vault_dir: Path, vault: CoreVault
) -> None:
    # No `created` in the file: were it parsed again, its new mtime would become `created`.
    path = write(vault_dir, "semantic/pets.md", WITHOUT_ID)
    (before,) = found(vault, "alpaca")
    bump_mtime(path, seconds=86_400 * 3)
    report = vault.sync()
    assert not report.changed
    assert vault.state.get("semantic/pets.md").mtime_ns == path.stat().st_mtime_ns
    (after,) = found(CoreVault.open(vault_dir), "alpaca")
    assert (after.id, after.created) == (before.id, before.created)
    assert path.read_text(encoding="utf-8") == WITHOUT_ID


def watch_parsing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths whose frontmatter is parsed from now on, in order."""
    parsed: list[str] = []
    real = kenomem.files.memory.from_text

    def spy(relpath: str, text: str, **kw: object) -> kenomem.files.memory.Memory:
        parsed.append(relpath)
        return real(relpath, text, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(kenomem.files.memory, "from_text", spy)
    return parsed


def test_new_mtime_with_the_same_bytes_is_not_parsed_again(
    vault_dir: Path, vault: CoreVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(vault_dir, "semantic/pets.md", WITHOUT_ID)
    vault.sync()
    parsed = watch_parsing(monkeypatch)
    bump_mtime(path)
    vault.sync()
    assert parsed == []


def test_new_mtime_with_the_same_bytes_keeps_the_access_count(
    vault_dir: Path, vault: CoreVault
) -> None:
    path = write(vault_dir, "semantic/pets.md", NO_FRONTMATTER)
    for _ in range(2):
        recall(vault, RecallRequest("alpaca", now=NOW))
    bump_mtime(path)
    (item,) = recall(CoreVault.open(vault_dir), RecallRequest("alpaca", now=NOW)).results
    assert item.access_count == 3
    assert path.read_text(encoding="utf-8") == NO_FRONTMATTER


def test_changed_bytes_are_parsed_again(
    vault_dir: Path, vault: CoreVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(vault_dir, "semantic/pets.md", WITHOUT_ID)
    vault.sync()
    parsed = watch_parsing(monkeypatch)
    path.write_text(WITHOUT_ID + "More about the alpaca.\n", encoding="utf-8")
    bump_mtime(path)
    report = vault.sync()
    assert parsed == ["semantic/pets.md"]
    assert report.updated == 1


# -- files that cannot be read -----------------------------------------------------------

BROKEN = """---
title: Broken
tags: [one, two
importance: 3
---

The zeppelin hangar is broken.
"""


def test_broken_frontmatter_is_reported_with_its_line_and_skipped(
    vault_dir: Path, vault: CoreVault, filler: Path
) -> None:
    path = write(vault_dir, "semantic/broken.md", BROKEN)
    assert ids(vault, "zeppelin") == []
    assert vault.last_sync is not None
    error = vault.last_sync.errors["semantic/broken.md"]
    assert error.startswith("line 4:")
    assert len(ids(vault, "kettle")) == 1
    # Still reported by a sync that finds nothing new.
    assert "semantic/broken.md" in vault.sync().errors
    assert "semantic/broken.md" in stats(vault).unreadable
    assert path.read_text(encoding="utf-8") == BROKEN


def test_broken_frontmatter_is_never_rewritten(vault_dir: Path, vault: CoreVault) -> None:
    path = write(vault_dir, "semantic/broken.md", BROKEN)
    write(vault_dir, "semantic/zeppelin.md", "---\ntitle: Zeppelin\n---\n\nA zeppelin flies.\n")
    st = path.stat()
    for _ in range(3):
        results = recall(
            CoreVault.open(vault_dir), RecallRequest("zeppelin hangar", now=NOW)
        ).results
        assert [r.path for r in results] == ["semantic/zeppelin.md"]
    assert path.read_bytes() == BROKEN.encode()
    assert path.stat().st_mtime_ns == st.st_mtime_ns


def test_unclosed_frontmatter_is_reported(vault_dir: Path, vault: CoreVault) -> None:
    write(vault_dir, "semantic/open.md", "---\ntitle: Never closed\n\nThe zeppelin.\n")
    report = vault.sync()
    assert report.errors["semantic/open.md"].startswith("line 1:")
    assert ids(vault, "zeppelin") == []


def test_fixed_frontmatter_is_indexed_and_no_longer_reported(
    vault_dir: Path, vault: CoreVault
) -> None:
    path = write(vault_dir, "semantic/broken.md", BROKEN)
    vault.sync()
    path.write_text(BROKEN.replace("[one, two", "[one, two]"), encoding="utf-8")
    bump_mtime(path)
    (item,) = found(vault, "zeppelin")
    assert item.tags == ["one", "two"]
    assert vault.last_sync is not None
    assert "semantic/broken.md" not in vault.last_sync.errors


def test_deleted_broken_file_is_no_longer_reported(vault_dir: Path, vault: CoreVault) -> None:
    path = write(vault_dir, "semantic/broken.md", BROKEN)
    assert "semantic/broken.md" in vault.sync().errors
    path.unlink()
    assert vault.sync().errors == {}
    assert stats(vault).unreadable == {}


def _binary() -> tuple[str, bytes]:
    return "semantic/binary.md", b"# Zeppelin\n\x00\x01\x02 zeppelin\n"


def _latin1() -> tuple[str, bytes]:
    return "semantic/latin1.md", "# Zeppelin\n\nzeppelin caf\xe9\n".encode("latin-1")


def _oversize() -> tuple[str, bytes]:
    line = b"zeppelin " * 7 + b"\n"
    data = b"# Zeppelin\n\n" + line * (kenomem.index.sync.MAX_FILE_BYTES // len(line) + 1)
    assert len(data) > kenomem.index.sync.MAX_FILE_BYTES
    return "semantic/huge.md", data


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (_binary, "binary"),
        (_latin1, "line 3: not UTF-8"),
        (_oversize, "larger than"),
    ],
)
def test_unreadable_files_are_reported_and_skipped(
    vault_dir: Path,
    vault: CoreVault,
    filler: Path,
    make: Callable[[], tuple[str, bytes]],
    reason: str,
) -> None:
    rel, data = make()
    path = vault_dir / rel
    path.write_bytes(data)
    assert ids(vault, "zeppelin") == []
    assert vault.last_sync is not None
    assert reason in vault.last_sync.errors[rel]
    assert len(ids(vault, "kettle")) == 1
    assert path.read_bytes() == data


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_symlink_to_outside_the_vault_is_reported_and_not_followed(
    vault_dir: Path, vault: CoreVault, filler: Path, tmp_path: Path, kind: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.md"
    secret.write_text("# Zeppelin\n\nThe zeppelin secret plans.\n", encoding="utf-8")
    link = vault_dir / ("semantic/link.md" if kind == "file" else "semantic/linked")
    link.symlink_to(secret if kind == "file" else outside)

    assert ids(vault, "zeppelin") == []
    assert vault.last_sync is not None
    rel = link.relative_to(vault_dir).as_posix()
    assert "outside the vault" in vault.last_sync.errors[rel]
    assert len(ids(vault, "kettle")) == 1
    assert secret.read_text(encoding="utf-8") == "# Zeppelin\n\nThe zeppelin secret plans.\n"


def test_symlink_inside_the_vault_is_followed(vault_dir: Path, vault: CoreVault) -> None:
    target = write(vault_dir, "semantic/real.md", "# Zeppelin\n\nA zeppelin.\n")
    (vault_dir / "procedural/alias.md").symlink_to(target)
    paths = {item.path for item in found(vault, "zeppelin")}
    assert "procedural/alias.md" in paths
    assert vault.last_sync is not None
    assert not any("outside" in why for why in vault.last_sync.errors.values())


def test_hidden_and_non_markdown_files_are_not_memories(vault_dir: Path, vault: CoreVault) -> None:
    write(vault_dir, "semantic/.pets.md.swp", "zeppelin")
    write(vault_dir, "semantic/.hidden.md", "# Zeppelin\n\nzeppelin\n")
    write(vault_dir, "semantic/notes.txt", "zeppelin")
    write(vault_dir, "buffer/2026-03-01.md", "---\ndate: 2026-03-01\n---\n\nzeppelin\n")
    assert ids(vault, "zeppelin") == []
    assert vault.sync().errors == {}


def test_files_verified_by_a_sync_are_not_read_again_by_the_next(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file indexed within moments of its last write is re-read once, to be sure of its
    stat; the next process must know it was, or every command would read it again."""
    from kenomem.index import state as state_mod

    write(vault_dir, "semantic/pets.md", WITH_ID)
    monkeypatch.setattr(kenomem.index.sync, "RACY_NS", 10**18)  # every file is "just written"
    CoreVault.open(vault_dir).sync()
    saved = state_mod.load(vault_dir / ".kenomem")
    assert saved is not None and "semantic/pets.md" in saved.unverified
    monkeypatch.setattr(kenomem.index.sync, "RACY_NS", 0)
    CoreVault.open(vault_dir).sync()
    saved = state_mod.load(vault_dir / ".kenomem")
    assert saved is not None and saved.unverified == set()


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 1500),
    st.lists(st.sampled_from(["word", "a", " ", "  \n", "\t", "longerword", "\n\n\n"])),
)
def test_a_preview_is_the_bodys_start_with_its_spaces_made_one(
    blank: int, parts: list[str]
) -> None:
    """Only the start of a long body is read for its preview, unless that start is blank."""
    body = " \n" * blank + "".join(parts) * 9
    text = " ".join(body.split())
    expected = text if len(text) <= 200 else text[:199].rsplit(" ", 1)[0] + "…"
    assert kenomem.index.sync.preview(body) == expected
