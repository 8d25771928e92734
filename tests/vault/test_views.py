"""`show`, `list` and `stats`: reading the vault without changing it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from kenomem.errors import AmbiguousId, MemoryNotFound, UsageError
from kenomem.vault.core import CoreVault
from kenomem.vault.views import ListRequest, list_memories, show, stats
from tests.conftest import write

pytestmark = pytest.mark.both_engines  # each test runs on Whoosh and on tantivy


def memory_file(mem_id: str, title: str, body: str, **keys: object) -> str:
    values: dict[str, object] = {"id": mem_id, "title": title}
    values.update(keys)
    lines = ["---", *(f"{k}: {v}" for k, v in values.items()), "---", "", body, ""]
    return "\n".join(lines)


@pytest.fixture
def listed(vault_dir: Path) -> None:
    rows = [
        # path, id, title, created, last_accessed, importance, extra keys
        ("semantic/a.md", "mem_20260101_090000_a1b2", "Bravo", "2026-01-01", "2026-02-05", 3,
         {"tags": "[work, db]"}),
        ("semantic/b.md", "mem_20260101_093000_c3d4", "Alpha", "2026-01-03", "2026-02-01", 9,
         {"tags": "[work]"}),
        ("episodic/c.md", "mem_20260202_120000_e5f6", "Delta", "2026-02-02", "2026-02-03", 5,
         {"scope": "chat:telegram-123", "when": "2026-02-02T12:00:00Z"}),
        ("procedural/d.md", "mem_20260210_080000_0a0b", "Charlie", "2026-02-10", "2026-02-10", 7,
         {"pinned": "true"}),
        ("archive/semantic/e.md", "mem_20251201_080000_1c1d", "Echo", "2025-12-01",
         "2025-12-01", 4, {"status": "archived"}),
        ("semantic/f.md", "mem_20251101_080000_2e2f", "Foxtrot", "2025-11-01", "2025-11-01", 4,
         {"status": "superseded", "superseded_by": "mem_20260101_093000_c3d4"}),
    ]  # fmt: skip
    for path, mem_id, title, created, accessed, importance, extra in rows:
        text = memory_file(
            mem_id,
            title,
            f"{title} body text.",
            created=f"{created}T00:00:00Z",
            last_accessed=f"{accessed}T00:00:00Z",
            importance=importance,
            **extra,
        )
        write(vault_dir, path, text)


def titles(vault: CoreVault, **kw: object) -> list[str]:
    return [m.title for m in list_memories(vault, ListRequest(**kw)).memories]  # type: ignore[arg-type]


# -- show --------------------------------------------------------------------------------


def test_show_by_full_id(vault: CoreVault, listed: None) -> None:
    mem = show(vault, "mem_20260101_090000_a1b2").memory
    assert (mem.title, mem.path, mem.tags) == ("Bravo", "semantic/a.md", ("work", "db"))
    assert mem.body.strip() == "Bravo body text."


@pytest.mark.parametrize("prefix", ["mem_20260210", "mem_2026021", "20260210", "20260202_12"])
def test_show_by_unique_prefix(vault: CoreVault, listed: None, prefix: str) -> None:
    mem = show(vault, prefix).memory
    assert mem.id.startswith("mem_" + prefix.removeprefix("mem_"))


def test_show_of_an_archived_memory(vault: CoreVault, listed: None) -> None:
    mem = show(vault, "mem_20251201").memory
    assert (mem.title, mem.status) == ("Echo", "archived")


@pytest.mark.parametrize("prefix", ["mem_20260101", "20260101_09", "mem_", "2026"])
def test_ambiguous_prefix(vault: CoreVault, listed: None, prefix: str) -> None:
    with pytest.raises(AmbiguousId):
        show(vault, prefix)


def test_ambiguous_prefix_names_the_candidates(vault: CoreVault, listed: None) -> None:
    with pytest.raises(AmbiguousId) as caught:
        show(vault, "mem_20260101")
    assert "mem_20260101_090000_a1b2" in caught.value.message
    assert "mem_20260101_093000_c3d4" in caught.value.message


def test_unknown_id_close_to_a_known_one_suggests_it(vault: CoreVault, listed: None) -> None:
    with pytest.raises(MemoryNotFound) as caught:
        show(vault, "mem_20260101_090000_a1b3")
    message = caught.value.message
    assert message.startswith("no memory matches 'mem_20260101_090000_a1b3'; did you mean ")
    assert "mem_20260101_090000_a1b2" in message


def test_unknown_id_far_from_everything(vault: CoreVault, listed: None) -> None:
    with pytest.raises(MemoryNotFound) as caught:
        show(vault, "zzzz")
    assert caught.value.message == "no memory matches 'zzzz'"
    assert caught.value.hint is not None
    assert "kenomem recall zzzz" in caught.value.hint


def test_show_a_hand_made_file_by_its_derived_id(vault_dir: Path, vault: CoreVault) -> None:
    write(vault_dir, "semantic/plain.md", "# Quince\n\nThe quince tree.\n")
    vault.sync()
    (derived,) = vault.state.ids()
    mem = show(vault, derived[:8]).memory
    assert (mem.title, mem.has_id, mem.has_frontmatter) == ("Quince", False, False)


def test_show_reads_the_file_as_it_is_now(vault_dir: Path, vault: CoreVault, listed: None) -> None:
    show(vault, "mem_20260210")
    path = vault_dir / "procedural/d.md"
    path.write_text(path.read_text("utf-8").replace("Charlie body", "Changed body"), "utf-8")
    assert "Changed body" in show(vault, "mem_20260210").memory.body


def test_show_does_not_change_the_file(vault_dir: Path, vault: CoreVault, listed: None) -> None:
    before = (vault_dir / "semantic/a.md").read_bytes()
    show(vault, "mem_20260101_090000_a1b2")
    assert (vault_dir / "semantic/a.md").read_bytes() == before


# -- list --------------------------------------------------------------------------------


def test_list_shows_active_memories_newest_first(vault: CoreVault, listed: None) -> None:
    result = list_memories(vault, ListRequest())
    assert [m.title for m in result.memories] == ["Charlie", "Delta", "Alpha", "Bravo"]
    assert result.total == 4
    first = result.memories[0]
    assert (first.type, first.path, first.status, first.importance) == (
        "procedural",
        "procedural/d.md",
        "active",
        7,
    )
    assert first.created == datetime(2026, 2, 10, tzinfo=UTC)


def test_list_filters(vault: CoreVault, listed: None) -> None:
    assert titles(vault, types=("semantic",)) == ["Alpha", "Bravo"]
    assert titles(vault, types=("episodic", "procedural")) == ["Charlie", "Delta"]
    assert titles(vault, tags=("work",)) == ["Alpha", "Bravo"]
    assert titles(vault, tags=("work", "db")) == ["Bravo"]
    assert "Delta" in titles(vault, scopes=("chat:telegram-123",))  # and the global ones
    assert "Delta" not in titles(vault, scopes=("global",))
    assert "Delta" not in titles(vault, scopes=("chat:other",))
    assert titles(vault, statuses=("archived",)) == ["Echo"]
    assert titles(vault, statuses=("superseded",)) == ["Foxtrot"]
    assert len(titles(vault, statuses=("active", "archived", "superseded"))) == 6
    assert titles(vault, since=datetime(2026, 1, 2, tzinfo=UTC)) == ["Charlie", "Delta", "Alpha"]
    assert titles(vault, until=datetime(2026, 1, 2, tzinfo=UTC)) == ["Bravo"]


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("created", ["Bravo", "Alpha", "Delta", "Charlie"]),
        ("last_accessed", ["Alpha", "Delta", "Bravo", "Charlie"]),
        ("importance", ["Bravo", "Delta", "Charlie", "Alpha"]),
        ("title", ["Alpha", "Bravo", "Charlie", "Delta"]),
    ],
)
def test_list_sort_keys(vault: CoreVault, listed: None, sort: str, expected: list[str]) -> None:
    assert titles(vault, sort=sort, asc=True) == expected
    assert titles(vault, sort=sort, asc=False) == expected[::-1]


def test_list_sorts_by_last_access_after_a_recall(vault: CoreVault, listed: None) -> None:
    from kenomem.recall.search import RecallRequest, recall

    recall(vault, RecallRequest("Bravo", now=datetime(2026, 3, 1, tzinfo=UTC)))
    listed_items = list_memories(vault, ListRequest(sort="last_accessed")).memories
    bravo = next(m for m in listed_items if m.title == "Bravo")
    assert bravo.last_accessed == datetime(2026, 3, 1, tzinfo=UTC)


def test_list_limit_and_total(vault: CoreVault, listed: None) -> None:
    result = list_memories(vault, ListRequest(limit=2))
    assert [m.title for m in result.memories] == ["Charlie", "Delta"]
    assert result.total == 4
    everything = list_memories(vault, ListRequest(limit=None))
    assert (len(everything.memories), everything.total) == (4, 4)


@pytest.mark.parametrize(
    "request_",
    [
        ListRequest(sort="size"),
        ListRequest(limit=0),
        ListRequest(types=("facts",)),
        ListRequest(statuses=("deleted",)),
    ],
)
def test_list_bad_options_are_usage_errors(
    vault: CoreVault, listed: None, request_: ListRequest
) -> None:
    with pytest.raises(UsageError):
        list_memories(vault, request_)


def test_list_sees_hand_edits(vault_dir: Path, vault: CoreVault, listed: None) -> None:
    assert len(titles(vault)) == 4
    (vault_dir / "semantic/a.md").unlink()
    write(vault_dir, "semantic/g.md", "# Golf\n\nA new note.\n")
    assert "Bravo" not in titles(vault)
    assert "Golf" in titles(vault)


# -- stats -------------------------------------------------------------------------------


def test_stats_counts(vault_dir: Path, vault: CoreVault, listed: None, engine_name: str) -> None:
    write(vault_dir, "semantic/broken.md", "---\ntitle: [oops\n---\n\nbroken\n")
    write(vault_dir, "working/s1.md", memory_file("mem_w", "Task", "a task", session="s1"))
    result = stats(vault)
    assert result.memories == 7
    assert result.files == 8
    assert result.by_type == {"semantic": 4, "episodic": 1, "procedural": 1, "working": 1}
    assert result.by_status == {"active": 5, "archived": 1, "superseded": 1, "proposed": 0}
    assert list(result.unreadable) == ["semantic/broken.md"]
    assert "line 2" in result.unreadable["semantic/broken.md"]
    assert result.pinned == 1
    assert result.oldest == datetime(2025, 11, 1, tzinfo=UTC)
    assert result.engine == engine_name


def test_stats_of_an_empty_vault(vault: CoreVault) -> None:
    result = stats(vault)
    assert result.memories == 0
    assert result.files == 0
    assert set(result.by_type.values()) == {0}
    assert result.oldest is None and result.newest is None
