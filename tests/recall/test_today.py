"""The buffer as recall candidates: what was logged and not yet consolidated (today.py)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.capture.log import LogRequest, log
from kenomem.capture.remember import RememberRequest, remember
from kenomem.index import Doc, stemming
from kenomem.recall import today
from kenomem.recall.search import RecallItem, RecallRequest, recall
from kenomem.sleep.consolidate import ConsolidateRequest, consolidate
from kenomem.vault.core import CoreVault
from tests.conftest import Cli, write

pytestmark = pytest.mark.both_engines

NOW = datetime(2026, 3, 10, 15, 0, tzinfo=UTC)
MORNING = NOW.replace(hour=9, minute=30)


def found(vault: CoreVault, query: str, **kw: object) -> list[RecallItem]:
    kw.setdefault("touch", False)
    kw.setdefault("now", NOW)
    return recall(vault, RecallRequest(query, **kw)).results  # type: ignore[arg-type]


def logged(vault: CoreVault, text: str, at: datetime = MORNING, **kw: str) -> None:
    log(vault, LogRequest(text, at=at, **kw))


def test_an_entry_logged_this_morning_is_recalled(vault: CoreVault) -> None:
    logged(vault, "We settled on the codename Bluebird", who="Adrian", session="chat-1")
    (item,) = found(vault, "bluebird")
    assert item.type == "buffer"
    assert item.path == "buffer/2026-03-10.md"
    assert (item.day, item.time, item.who, item.session) == (
        "2026-03-10",
        "09:30:00",
        "Adrian",
        "chat-1",
    )
    assert item.id == "buf_20260310_093000_0"
    assert item.snippet == "We settled on the codename Bluebird"
    assert item.created == MORNING
    # the same id at every recall: it is the day, the time and the place in the file
    assert found(vault, "codename")[0].id == item.id


def test_it_ranks_beside_memories(vault: CoreVault) -> None:
    remember(vault, RememberRequest("The cat is called Biscuit", type="semantic", now=MORNING))
    logged(vault, "Biscuit knocked the plant over again", who="Ana")
    logged(vault, "The weather is grey")
    items = found(vault, "biscuit")
    assert sorted(i.type for i in items) == ["buffer", "semantic"]
    assert {i.type for i in found(vault, "weather")} == {"buffer"}


def test_type_tag_and_scope_filter_entries_as_they_filter_memories(vault: CoreVault) -> None:
    remember(vault, RememberRequest("Bluebird is the new billing service", now=MORNING))
    logged(vault, "Bluebird ships on Friday", session="chat-1")
    logged(vault, "Bluebird needs a logo", session="chat-2")
    logged(vault, "Bluebird was my idea", who="Ana")
    assert {i.type for i in found(vault, "bluebird", types=("buffer",))} == {"buffer"}
    assert len(found(vault, "bluebird", types=("buffer",))) == 3
    assert "buffer" not in {i.type for i in found(vault, "bluebird", types=("semantic",))}
    assert "buffer" not in {i.type for i in found(vault, "bluebird", tags=("work",))}
    # a chat sees its own entries and the global ones; without a session an entry is
    # global, as a memory without a scope
    chat1 = found(vault, "bluebird", scopes=("chat-1",), types=("buffer",))
    assert sorted(i.snippet for i in chat1) == ["Bluebird ships on Friday", "Bluebird was my idea"]
    alone = found(vault, "bluebird", scopes=("global",), types=("buffer",))
    assert [i.snippet for i in alone] == ["Bluebird was my idea"]
    assert found(vault, "bluebird", types=("buffer",), since=NOW - timedelta(hours=1)) == []


def test_a_consolidated_day_is_not_counted_twice(vault: CoreVault) -> None:
    yesterday = MORNING - timedelta(days=1)
    logged(vault, "Remember this: the vault key lives in the blue binder", at=yesterday)
    assert {i.type for i in found(vault, "binder")} == {"buffer"}
    consolidate(vault, ConsolidateRequest(), now=NOW)
    types = [i.type for i in found(vault, "binder")]
    assert "buffer" not in types
    assert "episodic" in types


def aged(path: Path) -> None:
    """Its mtime well in the past, as a day consolidated last night has."""
    old = path.stat().st_mtime_ns - 60 * 10**9
    os.utime(path, ns=(old, old))


def test_a_consumed_day_is_not_read_again(
    vault: CoreVault, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vault with years of consolidated days reads none of them at each recall: a day
    found wholly consumed is passed over while its size and mtime stay as they were."""
    yesterday = MORNING - timedelta(days=1)
    logged(vault, "The vault key lives in the blue binder", at=yesterday)
    consolidate(vault, ConsolidateRequest(), now=NOW)
    day = vault_dir / "buffer" / f"{yesterday:%Y-%m-%d}.md"
    aged(day)
    assert "buffer" not in {i.type for i in found(vault, "binder")}  # read once, noted
    reads: list[str] = []
    real = today.read_text_inside

    def counted(root: Path, rel: str) -> str:
        reads.append(rel)
        return real(root, rel)

    monkeypatch.setattr(today, "read_text_inside", counted)
    assert "buffer" not in {i.type for i in found(vault, "binder")}
    assert reads == []
    # An entry appended to that day later (an import of history) changes its stat: read.
    logged(vault, "The binder moved to the red shelf", at=yesterday + timedelta(hours=1))
    buffered = [i.snippet for i in found(vault, "binder") if i.type == "buffer"]
    assert buffered == ["The binder moved to the red shelf"]
    assert reads == [f"buffer/{yesterday:%Y-%m-%d}.md"]


def test_a_day_changed_within_its_clock_tick_is_not_noted(
    vault: CoreVault, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A day consolidated a moment ago could change again without its stat changing:
    it is read again next time, not passed over."""
    yesterday = MORNING - timedelta(days=1)
    logged(vault, "The vault key lives in the blue binder", at=yesterday)
    consolidate(vault, ConsolidateRequest(), now=NOW)
    found(vault, "binder")
    assert not (vault_dir / ".kenomem" / today.CONSUMED).exists()


def test_entries_after_a_consolidation_of_today_stay_candidates(vault: CoreVault) -> None:
    logged(vault, "Remember this: the deploy window is Tuesday", at=MORNING)
    consolidate(vault, ConsolidateRequest(include_today=True), now=MORNING + timedelta(hours=1))
    logged(vault, "The deploy window moved to Thursday", at=MORNING + timedelta(hours=2))
    buffered = [i.snippet for i in found(vault, "deploy window") if i.type == "buffer"]
    assert buffered == ["The deploy window moved to Thursday"]


def test_recall_never_rewrites_the_buffer(vault: CoreVault, vault_dir: Path) -> None:
    logged(vault, "Bluebird ships on Friday", session="chat-1")
    path = vault_dir / "buffer/2026-03-10.md"
    before = path.read_bytes()
    (item,) = found(vault, "bluebird", touch=True)
    assert item.access_count == 0
    assert path.read_bytes() == before


def test_now_in_the_past_leaves_out_what_came_after(vault: CoreVault) -> None:
    """`recall --now T` showed memories created after T (and would show entries)."""
    remember(vault, RememberRequest("The gazebo is green", type="semantic", now=NOW))
    remember(
        vault,
        RememberRequest("The gazebo was painted red", type="semantic", now=NOW + timedelta(days=2)),
    )
    logged(vault, "Gazebo paint is drying", at=NOW + timedelta(days=1))
    titles = [i.title for i in found(vault, "gazebo", now=NOW + timedelta(hours=1))]
    assert titles == ["The gazebo is green"]
    later = {i.title for i in found(vault, "gazebo", now=NOW + timedelta(days=3))}
    assert later == {"The gazebo is green", "The gazebo was painted red", "Gazebo paint is drying"}


def test_now_in_the_past_keeps_a_hand_written_file_without_created(
    vault: CoreVault, vault_dir: Path
) -> None:
    """Its `created` is its file's time, the time of its last edit: it may be older."""
    write(vault_dir, "semantic/gazebo.md", "# Gazebo\n\nThe gazebo has a slate roof.\n")
    assert [i.title for i in found(vault, "gazebo", now=NOW - timedelta(days=400))] == ["Gazebo"]


def _doc(body: str) -> Doc:
    return Doc(
        "x", "buffer/x.md", "buffer", "active", "global", "", (), body, 0, 0, 0, 0, 0, 0, 5, False
    )


def occurrences(text: str, wanted: set[str]) -> list[tuple[str, int]]:
    return [(word, 0) for word in text.split() if word in wanted]


def test_bm25_prefers_rare_terms_and_short_entries() -> None:
    docs = [_doc("kiwi"), _doc("kiwi apple apple apple apple apple apple"), _doc("apple")]

    def frequency(held: set[str]) -> tuple[dict[str, int], int]:
        return {"apple": 40, "kiwi": 1}, 100

    scores = today.bm25(docs, ["kiwi", "apple"], occurrences, frequency)
    assert scores[0] > scores[2]  # kiwi is rarer than apple
    assert scores[0] > scores[1] > 0  # the long entry holds kiwi among many other words
    assert today.bm25(docs, ["pear"], occurrences, frequency) == [0.0, 0.0, 0.0]


def test_cli_recall_shows_entries_and_confidence(cli: Cli, vault_dir: Path) -> None:
    assert cli("log", "We settled on the codename Bluebird", "--who", "Adrian").code == 0
    out = cli("recall", "bluebird", "--json")
    doc = json.loads(out.out)
    assert doc["confidence"] in ("medium", "high")
    (item,) = doc["results"]
    assert item["type"] == "buffer"
    assert item["who"] == "Adrian"
    assert item["session"] is None
    assert {"id", "path", "day", "time", "score", "snippet"} <= set(item)
    human = cli("recall", "bluebird")
    assert "buffer" in human.out
    assert "Adrian" in human.out
    assert "confidence: " in human.err
    assert (
        json.loads(cli("recall", "bluebird", "--type", "semantic", "--json").out)["confidence"]
        == "none"
    )


def test_cli_recall_now_before_a_memory_was_made(cli: Cli) -> None:
    assert cli("remember", "The gazebo is green", "--type", "semantic").code == 0
    assert cli("log", "The gazebo needs paint").code == 0
    past = json.loads(cli("recall", "gazebo", "--now", "2020-01-01", "--json").out)
    assert past["results"] == []
    assert past["confidence"] == "none"
    assert len(json.loads(cli("recall", "gazebo", "--json").out)["results"]) == 2


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(categories=("L", "Nd")), min_size=1, max_size=20))
def test_a_word_holds_the_head_of_its_stem(word: str) -> None:
    """Only entries holding a query term's head are analysed: the stemmer must never
    change what comes before it, or an entry that matches would be skipped."""
    for text in (word, word.capitalize() + "ing", word + "ies", word + "ational"):
        for term in stemming.analyze(text):
            assert today._head(term) in text.lower()
