"""A time alone is a query: "what did we talk about yesterday" gives what happened then;
with a topic, the time filters and the topic ranks (search.py, temporal.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.client.session import ClientSession

from kenomem.api import Vault
from kenomem.recall.search import RecallResult
from kenomem.recall.temporal import QUESTION_WORDS, asked, time_cue
from tests.adversarial.hostile import hostile_text
from tests.conftest import Cli
from tests.mcp_client import data, serve
from tests.recall.helpers import recall_settings

NOW = datetime(2026, 3, 10, 15, 0, tzinfo=UTC)  # a Tuesday
YESTERDAY = NOW - timedelta(days=1)
LAST_WEEK = NOW - timedelta(days=6)  # Wednesday 4 March
EARLIER = NOW - timedelta(days=60)


def _vault(vault_dir: Path) -> Vault:
    """Memories of several days, and the buffer of this morning, never consolidated."""
    v = Vault(vault_dir)

    def said(text: str, at: datetime, importance: int, tags: tuple[str, ...] = ()) -> None:
        v.remember(text, type="episodic", now=at, importance=importance, tags=tags)

    said("Reviewed the quarterly numbers with Ines", YESTERDAY.replace(hour=10), 7)
    said("Fixed the flaky login test", YESTERDAY.replace(hour=16), 4)
    said(
        "Day summary: quarterly numbers and the login test",
        YESTERDAY.replace(hour=23),
        9,
        ("summary",),
    )
    said("Decided to hold the offsite in Lisbon", LAST_WEEK, 6)
    said("Booked the hotel for the team dinner", LAST_WEEK + timedelta(days=1), 5)
    said("Chose pastel blue for the offsite banners", LAST_WEEK + timedelta(hours=2), 5)
    said("The offsite budget was first drafted", EARLIER, 8)
    said("Renewed the office plant subscription", EARLIER, 5)
    v.log("Ordered lunch from the Thai place", at=NOW.replace(hour=9, minute=30), who="Ana")
    v.log("Paired on the release notes", at=NOW.replace(hour=13), who="Ana")
    v.log("Walked the dog before work", at=YESTERDAY.replace(hour=7), who="Ana")
    return v


def _ask(v: Vault, query: str) -> RecallResult:
    return v.recall(query, now=NOW, touch=False)


def _titles(result: RecallResult) -> list[str]:
    return [item.title for item in result.results]


@pytest.mark.both_engines
def test_a_time_alone_gives_what_happened_then(vault_dir: Path) -> None:
    v = _vault(vault_dir)
    found = _ask(v, "what did we talk about yesterday")
    assert _titles(found) == [
        "Day summary: quarterly numbers and the login test",  # importance 9
        "Reviewed the quarterly numbers with Ines",  # 7
        "Walked the dog before work",  # a buffer entry, 5
        "Fixed the flaky login test",  # 4
    ]
    assert found.results[2].type == "buffer"
    assert found.period is not None and found.period.alone and found.period.kept
    assert found.period.said == "yesterday"
    assert (found.period.since, found.period.until) == (
        datetime(2026, 3, 9, tzinfo=UTC),
        datetime(2026, 3, 9, 23, 59, 59, tzinfo=UTC),
    )
    assert found.confidence == "high"
    assert found.warnings == []
    # the buffer of this morning, not this afternoon's entry
    assert _titles(_ask(v, "what happened this morning")) == ["Ordered lunch from the Thai place"]
    # "decide" ranks ("Decided ..." first) but does not narrow: the whole week comes
    assert _titles(_ask(v, "what did we decide last week")) == [
        "Decided to hold the offsite in Lisbon",
        "Booked the hotel for the team dinner",  # the same importance: the newest first
        "Chose pastel blue for the offsite banners",
    ]
    for query in ("on 4 March", "what happened last Wednesday"):
        assert _titles(_ask(v, query))[0] == "Decided to hold the offsite in Lisbon"
    assert _titles(_ask(v, "in January")) == [
        "The offsite budget was first drafted",
        "Renewed the office plant subscription",
    ]
    # the words of a question alone, without a time, are no query for everything
    nothing = _ask(v, "what did we talk about")
    assert nothing.results == [] and nothing.period is None


def test_a_topic_with_a_time_ranks_then_first_or_keeps_only_then(vault_dir: Path) -> None:
    v = _vault(vault_dir)
    query = "what did we decide about the offsite last week"
    found = _ask(v, query)
    assert _titles(found) == [
        "Decided to hold the offsite in Lisbon",
        "Chose pastel blue for the offsite banners",
        "The offsite budget was first drafted",  # two months ago: after, not hidden
    ]  # not the hotel of the same week: the topic ranks
    assert found.period is not None and not found.period.alone and not found.period.kept
    recall_settings(vault_dir, time_filter=True)
    v = Vault(vault_dir)
    kept = _ask(v, query)
    assert _titles(kept) == _titles(found)[:2]
    assert kept.period is not None and kept.period.kept
    # nothing of then matches: results from any time, and a warning says so
    other = _ask(v, "office plant subscription yesterday")
    assert _titles(other) == ["Renewed the office plant subscription"]
    assert other.period is not None and not other.period.kept
    assert other.warnings == ["nothing from 'yesterday' matches: results from any time"]


def test_the_cli_says_the_period(cli: Cli, vault_dir: Path) -> None:
    _vault(vault_dir)
    now = ("--now", "2026-03-10T15:00")
    doc = json.loads(cli("recall", "what", "happened", "yesterday", *now, "--json").out)
    assert doc["period"] == {
        "from": "2026-03-09T00:00:00Z",
        "to": "2026-03-09T23:59:59Z",
        "said": "yesterday",
        "alone": True,
        "filtered": True,
    }
    assert doc["results"][0]["title"] == "Day summary: quarterly numbers and the login test"
    plain = cli("recall", "what did we talk about this morning", *now, "--no-touch")
    assert plain.code == 0
    assert "Ordered lunch from the Thai place" in plain.out
    assert "period: 'this morning', 2026-03-10 00:00 to 11:59" in plain.err
    nothing = cli("recall", "what did we talk about", *now)
    assert "no memory matches" in nothing.err
    assert "period" not in nothing.err


def test_after_consolidation_yesterday_is_still_there(vault_dir: Path) -> None:
    """Logged, then consolidated by the sleep cycle: the day's episodes and summary (or
    its entries, for what became no memory) answer a time alone."""
    v = Vault(vault_dir)
    for hour, text in ((9, "Migrated the billing service to the new cluster"), (11, "ok")):
        v.log(text, at=YESTERDAY.replace(hour=hour), who="Ana")
    v.consolidate()
    found = _ask(v, "what did we talk about yesterday")
    assert found.results
    for item in found.results:
        assert item.created.date() == YESTERDAY.date() or item.day == "2026-03-09"
    assert any("billing" in f"{i.title} {i.snippet}".lower() for i in found.results)


@settings(max_examples=300)
@given(hostile_text(), st.integers(min_value=-(10**9), max_value=10**9))
def test_time_phrases_never_raise_and_a_period_runs_forwards(text: str, shift: int) -> None:
    now = NOW + timedelta(seconds=shift)
    for query in (text, f"{text} yesterday", f"what happened {text} last week", f"9{text} ago"):
        cue = time_cue(query, now)
        if cue is not None:
            assert cue.since <= cue.until
            parts = asked(query, cue)
            assert QUESTION_WORDS.isdisjoint(parts.hard.split() + parts.soft.split())


@pytest.mark.parametrize(
    ("query", "first", "last"),
    [
        ("what happened this morning", "2026-03-10T00:00", "2026-03-10T11:59"),
        ("this afternoon", "2026-03-10T12:00", "2026-03-10T17:59"),
        ("yesterday evening", "2026-03-09T18:00", "2026-03-09T23:59"),
        ("last night", "2026-03-09T18:00", "2026-03-10T05:59"),
        ("tonight", "2026-03-10T18:00", "2026-03-10T23:59"),
        ("last Tuesday", "2026-03-03T00:00", "2026-03-03T23:59"),
        ("9999999999 years ago", None, None),
    ],
)
def test_parts_of_a_day(query: str, first: str | None, last: str | None) -> None:
    cue = time_cue(query, NOW)
    if first is None:
        assert cue is None
        return
    assert cue is not None
    assert (f"{cue.since:%Y-%m-%dT%H:%M}", f"{cue.until:%Y-%m-%dT%H:%M}") == (first, last)


@pytest.mark.slow  # a real MCP server process
def test_over_mcp_recall_and_context_answer_a_time_alone(vault_dir: Path, tmp_path: Path) -> None:
    async def check(session: ClientSession) -> None:
        for text in ("Swapped the router for the new mesh kit", "Booked the dentist"):
            assert not (await session.call_tool("log", {"text": text})).is_error
        found = data(await session.call_tool("recall", {"query": "what happened today"}))
        assert {r["title"] for r in found["results"]} == {
            "Swapped the router for the new mesh kit",
            "Booked the dentist",
        }
        assert found["period"]["said"] == "today" and found["period"]["alone"]
        assert found["confidence"] == "high"
        nothing = data(await session.call_tool("recall", {"query": "what did we talk about"}))
        assert nothing["results"] == [] and nothing["period"] is None
        block = await session.call_tool("context", {"query": "what did we talk about today"})
        text = block.content[0].text  # type: ignore[union-attr]
        assert "Swapped the router for the new mesh kit" in text
        assert "Booked the dentist" in text

    assert serve(vault_dir, check, tmp_path / "err.log") == []
