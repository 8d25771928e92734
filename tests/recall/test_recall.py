"""`recall`: ranking by recency + importance + relevance, filters, and touching the files."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kenomem.capture.remember import RememberRequest, remember
from kenomem.errors import UsageError
from kenomem.files.memory import derived_id
from kenomem.recall.search import RecallItem, RecallRequest, recall
from kenomem.vault.core import CoreVault
from tests.conftest import write
from tests.recall.helpers import STAMP, memory_file

pytestmark = pytest.mark.both_engines  # each test runs on Whoosh and on tantivy

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def results(vault: CoreVault, query: str, **kw: object) -> list[RecallItem]:
    kw.setdefault("touch", False)
    kw.setdefault("now", NOW)
    return recall(vault, RecallRequest(query, **kw)).results  # type: ignore[arg-type]


def ids(vault: CoreVault, query: str, **kw: object) -> list[str]:
    return [item.id for item in results(vault, query, **kw)]


# -- ranking -----------------------------------------------------------------------------


@pytest.fixture
def important_vs_relevant(vault_dir: Path) -> None:
    write(
        vault_dir,
        "semantic/important.md",
        memory_file(
            "mem_imp",
            "Garden plan",
            "Water the garden daily. The tomato bed is in the corner. Check the fence.",
            importance=10,
        ),
    )
    write(
        vault_dir,
        "semantic/relevant.md",
        memory_file(
            "mem_rel",
            "Tomato varieties",
            "Tomato: cherry tomato, plum tomato and beefsteak tomato.",
            importance=1,
        ),
    )


def test_the_three_terms_are_reported_and_make_the_score(
    vault: CoreVault, important_vs_relevant: None
) -> None:
    by_id = {item.id: item for item in results(vault, "tomato")}
    assert by_id["mem_imp"].importance == 1.0
    assert by_id["mem_rel"].importance == 0.0
    assert by_id["mem_rel"].relevance == 1.0
    assert 0.0 < by_id["mem_imp"].relevance < 1.0
    for item in by_id.values():
        assert item.recency == 1.0  # created and accessed now
        expected = 0.1 * item.recency + 0.5 * item.importance + 1.0 * item.relevance
        assert math.isclose(item.score, expected, abs_tol=1e-3)


def test_weights_change_the_order(vault: CoreVault, important_vs_relevant: None) -> None:
    by_relevance = ids(vault, "tomato", w_importance=0.0, w_recency=0.0, w_relevance=1.0)
    by_importance = ids(vault, "tomato", w_importance=5.0, w_recency=0.0, w_relevance=1.0)
    assert by_relevance == ["mem_rel", "mem_imp"]
    assert by_importance == ["mem_imp", "mem_rel"]


def test_weights_from_settings_are_used(vault_dir: Path, important_vs_relevant: None) -> None:
    (vault_dir / "kenomem.toml").write_text(
        "[recall]\nw_importance = 5.0\nw_recency = 0.0\nw_relevance = 1.0\n", encoding="utf-8"
    )
    assert ids(CoreVault.open(vault_dir), "tomato") == ["mem_imp", "mem_rel"]
    (vault_dir / "kenomem.toml").write_text(
        "[recall]\nw_importance = 0.0\nw_recency = 0.0\n", encoding="utf-8"
    )
    assert ids(CoreVault.open(vault_dir), "tomato") == ["mem_rel", "mem_imp"]


def test_recency_halves_every_half_life(vault_dir: Path, vault: CoreVault) -> None:
    old = (NOW - timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    write(
        vault_dir,
        "semantic/old.md",
        memory_file("mem_old", "Kite", "A red kite.", created=old, last_accessed=old),
    )
    write(vault_dir, "semantic/new.md", memory_file("mem_new", "Kite", "A red kite."))
    by_id = {item.id: item for item in results(vault, "kite")}
    assert by_id["mem_new"].recency == 1.0
    assert by_id["mem_old"].recency == 0.5
    assert ids(vault, "kite", w_recency=1.0) == ["mem_new", "mem_old"]


def test_recency_counts_from_the_last_access(vault_dir: Path, vault: CoreVault) -> None:
    old = (NOW - timedelta(days=60)).strftime("%Y-%m-%dT%H:%M:%SZ")
    write(vault_dir, "semantic/a.md", memory_file("mem_a", "Kite", "A red kite.", created=old))
    (item,) = results(vault, "kite")
    assert item.recency == 1.0  # accessed now, though created long ago


def test_pinned_memory_never_fades(vault_dir: Path, vault: CoreVault) -> None:
    old = "2020-01-01T00:00:00Z"
    text = memory_file("mem_pin", "Kite", "A red kite.", created=old, last_accessed=old)
    write(vault_dir, "semantic/pinned.md", text.replace("importance: 5", "pinned: true"))
    (item,) = results(vault, "kite")
    assert item.recency == 1.0


def test_reinforcement_raises_importance(vault_dir: Path, vault: CoreVault) -> None:
    write(vault_dir, "semantic/a.md", memory_file("mem_a", "Kite", "A red kite.", reinforced=1))
    write(vault_dir, "semantic/b.md", memory_file("mem_b", "Kite", "A red kite."))
    by_id = {item.id: item for item in results(vault, "kite")}
    assert by_id["mem_b"].importance == round(4 / 9, 4)
    assert by_id["mem_a"].importance == round(5 / 9, 4)
    assert ids(vault, "kite") == ["mem_a", "mem_b"]


def test_results_are_sorted_by_score_and_limited(vault_dir: Path, vault: CoreVault) -> None:
    for n in range(1, 7):
        write(
            vault_dir,
            f"semantic/kite-{n}.md",
            memory_file(f"mem_{n}", f"Note {n}", "kite " * n + "sky", importance=n),
        )
    found = results(vault, "kite", limit=3)
    assert len(found) == 3
    scores = [item.score for item in found]
    assert scores == sorted(scores, reverse=True)
    assert len(results(vault, "kite")) == 6
    assert [item.id for item in found] == ids(vault, "kite")[:3]


# -- filters -----------------------------------------------------------------------------


@pytest.fixture
def varied(vault_dir: Path) -> None:
    write(
        vault_dir,
        "semantic/fact.md",
        memory_file("mem_fact", "Otter", "otter fact", tags="[animals, river]"),
    )
    write(
        vault_dir,
        "episodic/ev.md",
        memory_file(
            "mem_ep",
            "Otter",
            "otter seen",
            tags="[animals]",
            scope="chat:telegram-123",
            when="2025-01-15T10:00:00Z",
        ),
    )
    write(
        vault_dir,
        "procedural/how.md",
        memory_file("mem_proc", "Otter", "otter care", tags="[river]"),
    )
    write(
        vault_dir,
        "semantic/old.md",
        memory_file("mem_old", "Otter", "otter history", created="2025-01-10T00:00:00Z"),
    )
    write(
        vault_dir,
        "episodic/late.md",
        memory_file(
            "mem_late",
            "Otter",
            "otter late",
            created="2025-01-10T00:00:00Z",
            when="2026-02-20T00:00:00Z",
        ),
    )
    write(
        vault_dir,
        "archive/semantic/gone.md",
        memory_file("mem_arch", "Otter", "otter gone", status="archived"),
    )
    write(
        vault_dir,
        "semantic/replaced.md",
        memory_file(
            "mem_sup", "Otter", "otter before", status="superseded", superseded_by="mem_fact"
        ),
    )


ACTIVE = ["mem_ep", "mem_fact", "mem_late", "mem_old", "mem_proc"]


def test_only_active_memories_by_default(vault: CoreVault, varied: None) -> None:
    assert sorted(ids(vault, "otter")) == ACTIVE


def test_archive_includes_archived_and_superseded(vault: CoreVault, varied: None) -> None:
    assert sorted(ids(vault, "otter", archive=True)) == sorted([*ACTIVE, "mem_arch", "mem_sup"])
    by_id = {item.id: item for item in results(vault, "otter", archive=True)}
    assert by_id["mem_arch"].status == "archived"
    assert by_id["mem_sup"].status == "superseded"


def test_filter_by_type(vault: CoreVault, varied: None) -> None:
    assert sorted(ids(vault, "otter", types=("episodic",))) == ["mem_ep", "mem_late"]
    assert sorted(ids(vault, "otter", types=("procedural", "semantic"))) == [
        "mem_fact",
        "mem_old",
        "mem_proc",
    ]


def test_unknown_type_is_a_usage_error(vault: CoreVault, varied: None) -> None:
    with pytest.raises(UsageError):
        results(vault, "otter", types=("semantics",))


def test_every_given_tag_is_required(vault: CoreVault, varied: None) -> None:
    assert sorted(ids(vault, "otter", tags=("animals",))) == ["mem_ep", "mem_fact"]
    assert sorted(ids(vault, "otter", tags=("river",))) == ["mem_fact", "mem_proc"]
    assert ids(vault, "otter", tags=("animals", "river")) == ["mem_fact"]
    assert ids(vault, "otter", tags=("animals", "nothing")) == []


def test_filter_by_scope(vault: CoreVault, varied: None) -> None:
    # A chat sees its own memories and the global ones; `global` alone, the global ones.
    assert sorted(ids(vault, "otter", scopes=("chat:telegram-123",))) == sorted(ACTIVE)
    assert "mem_ep" not in ids(vault, "otter", scopes=("global",))
    assert len(ids(vault, "otter", scopes=("global",))) == len(ACTIVE) - 1
    assert "mem_ep" not in ids(vault, "otter", scopes=("chat:other",))
    assert len(ids(vault, "otter", scopes=("chat:other",))) == len(ACTIVE) - 1


def test_time_range_uses_when_for_episodes_and_created_otherwise(
    vault: CoreVault, varied: None
) -> None:
    january = {
        "since": datetime(2025, 1, 1, tzinfo=UTC),
        "until": datetime(2025, 2, 1, tzinfo=UTC),
    }
    # mem_ep happened in January 2025 (written now); mem_old was created then;
    # mem_late was written then but happened in 2026.
    assert sorted(ids(vault, "otter", **january)) == ["mem_ep", "mem_old"]
    since_2026 = ids(vault, "otter", since=datetime(2026, 1, 1, tzinfo=UTC))
    assert sorted(since_2026) == ["mem_fact", "mem_late", "mem_proc"]
    until_2026 = ids(vault, "otter", until=datetime(2026, 1, 1, tzinfo=UTC))
    assert sorted(until_2026) == ["mem_ep", "mem_old"]


def test_limit_must_be_positive(vault: CoreVault, varied: None) -> None:
    assert len(results(vault, "otter", limit=1)) == 1
    with pytest.raises(UsageError):
        results(vault, "otter", limit=0)


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_is_a_usage_error(vault: CoreVault, varied: None, query: str) -> None:
    with pytest.raises(UsageError):
        results(vault, query)


def test_negative_weight_is_a_usage_error(vault: CoreVault, varied: None) -> None:
    with pytest.raises(UsageError):
        results(vault, "otter", w_recency=-1.0)


def test_query_of_stop_words_finds_nothing_and_says_why(vault: CoreVault, varied: None) -> None:
    found = recall(vault, RecallRequest("the and of", touch=False, now=NOW))
    assert found.results == []
    assert found.warnings


def test_stale_working_memory_is_excluded(vault_dir: Path, vault: CoreVault) -> None:
    start = NOW - timedelta(days=30)
    remember(
        vault,
        RememberRequest("Pending: repaint the gazebo", type="working", session="s1", now=start),
    )
    remember(vault, RememberRequest("The gazebo is green", type="semantic", now=start))
    fresh = [item.type for item in results(vault, "gazebo", now=start + timedelta(days=2))]
    assert sorted(fresh) == ["semantic", "working"]
    stale = [item.type for item in results(vault, "gazebo", now=start + timedelta(days=8))]
    assert stale == ["semantic"]


def test_working_stale_days_comes_from_the_settings(vault_dir: Path) -> None:
    (vault_dir / "kenomem.toml").write_text("[memory]\nworking_stale_days = 1.0\n", "utf-8")
    vault = CoreVault.open(vault_dir)
    start = NOW - timedelta(days=30)
    remember(
        vault,
        RememberRequest("Pending: repaint the gazebo", type="working", session="s1", now=start),
    )
    assert ids(vault, "gazebo", now=start + timedelta(hours=12)) != []
    assert ids(vault, "gazebo", now=start + timedelta(days=2)) == []


# -- touching ----------------------------------------------------------------------------

HUMAN = """---
# kept: a comment a human wrote
title:   Deploy checklist   # aligned by hand
zeta: unknown key, first
id: mem_20250101_000000_dep1
last_accessed: 2025-01-01T00:00:00Z    # old
custom:
  nested: [1, 2]
access_count:    3
'quoted key': "value"
---

Deploying the frobnicator: drain the queue first.
"""


def test_touch_updates_only_last_accessed_and_access_count(
    vault_dir: Path, vault: CoreVault
) -> None:
    path = write(vault_dir, "procedural/deploy.md", HUMAN)
    (item,) = recall(vault, RecallRequest("frobnicator", now=NOW)).results
    assert item.access_count == 4
    assert item.last_accessed == NOW
    expected = HUMAN.replace("2025-01-01T00:00:00Z", STAMP).replace(
        "access_count:    3", "access_count:    4"
    )
    assert path.read_text(encoding="utf-8") == expected


# A hand-made file without an id gets its derived id written when it is touched anyway.
DEPLOY_ID = derived_id("procedural/deploy.md")


def test_touch_adds_missing_keys_before_the_closing_line(vault_dir: Path, vault: CoreVault) -> None:
    text = "---\ntitle: Deploy   # mine\nextra: [a, b]\n---\n\nThe frobnicator runs.\n"
    path = write(vault_dir, "procedural/deploy.md", text)
    recall(vault, RecallRequest("frobnicator", now=NOW))
    assert path.read_text(encoding="utf-8") == (
        "---\ntitle: Deploy   # mine\nextra: [a, b]\n"
        f"last_accessed: {STAMP}\naccess_count: 1\nid: {DEPLOY_ID}\n---\n\nThe frobnicator runs.\n"
    )


def test_touch_keeps_crlf_line_endings(vault_dir: Path, vault: CoreVault) -> None:
    text = "---\r\ntitle: Deploy\r\naccess_count: 2\r\n---\r\n\r\nThe frobnicator.\r\n"
    path = vault_dir / "procedural/deploy.md"
    path.write_bytes(text.encode())
    recall(vault, RecallRequest("frobnicator", now=NOW))
    assert (
        path.read_bytes()
        == (
            "---\r\ntitle: Deploy\r\naccess_count: 3\r\n"
            f"last_accessed: {STAMP}\r\nid: {DEPLOY_ID}\r\n---\r\n\r\nThe frobnicator.\r\n"
        ).encode()
    )


def test_touch_updates_a_file_that_starts_with_a_byte_order_mark(
    vault_dir: Path, vault: CoreVault
) -> None:
    text = "\ufeff---\ntitle: Deploy\naccess_count: 2\n---\n\nThe frobnicator.\n"
    path = write(vault_dir, "procedural/deploy.md", text)
    (item,) = recall(vault, RecallRequest("frobnicator", now=NOW)).results
    assert item.access_count == 3
    assert path.read_text(encoding="utf-8") == (
        f"\ufeff---\ntitle: Deploy\naccess_count: 3\nlast_accessed: {STAMP}\n"
        f"id: {DEPLOY_ID}\n---\n\nThe frobnicator.\n"
    )


def test_recalling_twice_counts_twice(vault_dir: Path, vault: CoreVault) -> None:
    made = remember(
        vault,
        RememberRequest(
            "The frobnicator lives in rack 4", type="semantic", now=NOW - timedelta(days=3)
        ),
    )
    path = vault_dir / made.path
    later = NOW + timedelta(hours=1)
    first = recall(vault, RecallRequest("frobnicator", now=NOW)).results[0]
    second = recall(CoreVault.open(vault_dir), RecallRequest("frobnicator", now=later)).results[0]
    assert (first.access_count, second.access_count) == (1, 2)
    assert second.last_accessed == later
    text = path.read_text(encoding="utf-8")
    assert "access_count: 2\n" in text
    assert f"last_accessed: {later:%Y-%m-%dT%H:%M:%SZ}\n" in text
    assert CoreVault.open(vault_dir).sync().changed is False  # our own write is not a hand edit


def test_touch_false_leaves_the_file_byte_identical(vault_dir: Path, vault: CoreVault) -> None:
    path = write(vault_dir, "procedural/deploy.md", HUMAN)
    before = path.stat()
    for _ in range(2):
        (item,) = recall(vault, RecallRequest("frobnicator", touch=False, now=NOW)).results
        assert item.access_count == 3
    assert path.read_text(encoding="utf-8") == HUMAN
    assert path.stat().st_mtime_ns == before.st_mtime_ns


def test_touch_can_be_turned_off_in_the_settings(vault_dir: Path) -> None:
    (vault_dir / "kenomem.toml").write_text("[recall]\ntouch = false\n", encoding="utf-8")
    path = write(vault_dir, "procedural/deploy.md", HUMAN)
    recall(CoreVault.open(vault_dir), RecallRequest("frobnicator", now=NOW))
    assert path.read_text(encoding="utf-8") == HUMAN


def test_plain_note_is_not_rewritten_but_its_access_is_remembered(
    vault_dir: Path, vault: CoreVault
) -> None:
    text = "# Frobnicator\n\nThe frobnicator needs oil.\n"
    path = write(vault_dir, "semantic/frob.md", text)
    counts = []
    for hours in range(3):
        when = NOW + timedelta(hours=hours)
        (item,) = recall(CoreVault.open(vault_dir), RecallRequest("frobnicator", now=when)).results
        counts.append(item.access_count)
        assert item.last_accessed == when
    assert counts == [1, 2, 3]
    assert path.read_text(encoding="utf-8") == text


def test_touched_file_edited_by_hand_keeps_counting(vault_dir: Path, vault: CoreVault) -> None:
    text = "---\ntitle: Frob\n---\n\nThe frobnicator needs oil.\n"
    path = write(vault_dir, "semantic/frob.md", text)
    recall(vault, RecallRequest("frobnicator", now=NOW))
    recall(vault, RecallRequest("frobnicator", now=NOW))
    edited = path.read_text(encoding="utf-8").replace("needs oil", "needs grease now")
    path.write_text(edited, encoding="utf-8")
    (item,) = recall(CoreVault.open(vault_dir), RecallRequest("grease", now=NOW)).results
    assert item.access_count == 3
    assert "access_count: 3\n" in path.read_text(encoding="utf-8")
    assert "needs grease now" in path.read_text(encoding="utf-8")


def test_only_returned_memories_are_touched(vault_dir: Path, vault: CoreVault) -> None:
    for n in range(3):
        write(
            vault_dir,
            f"semantic/k{n}.md",
            memory_file(f"mem_{n}", "Kite", "kite " * (n + 1), importance=9 - n * 4),
        )
    before = {n: (vault_dir / f"semantic/k{n}.md").read_text("utf-8") for n in range(3)}
    (item,) = recall(vault, RecallRequest("kite", limit=1, now=NOW)).results
    touched = [
        n for n in range(3) if (vault_dir / f"semantic/k{n}.md").read_text("utf-8") != before[n]
    ]
    assert touched == [int(item.id.split("_")[1])]


# -- what is shown -----------------------------------------------------------------------


def test_snippet_is_the_best_sentence(vault_dir: Path, vault: CoreVault) -> None:
    body = (
        "# Travel\n\nWe flew to Lisbon in May. The hotel was near the river. "
        "Deploying the frobnicator to the Lisbon cluster took two days! Dinner was late."
    )
    write(vault_dir, "episodic/trip.md", body)
    (item,) = results(vault, "deploy frobnicator lisbon")
    assert item.snippet == "Deploying the frobnicator to the Lisbon cluster took two days!"


def test_result_fields(vault_dir: Path, vault: CoreVault) -> None:
    write(
        vault_dir,
        "semantic/kite.md",
        memory_file(
            "mem_kite",
            "Kite facts",
            "A red kite.",
            tags="[birds, sky]",
            created="2026-02-01T08:00:00Z",
        ),
    )
    (item,) = results(vault, "kite")
    assert item.id == "mem_kite"
    assert item.type == "semantic"
    assert item.title == "Kite facts"
    assert item.path == "semantic/kite.md"
    assert item.tags == ["birds", "sky"]
    assert item.created == datetime(2026, 2, 1, 8, 0, tzinfo=UTC)
    assert item.last_accessed == NOW
    assert item.snippet == "A red kite."
