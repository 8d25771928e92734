"""Times named in a query, and how recall uses them and a memory's neighbours."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from kenomem.api import Vault
from kenomem.index import Doc
from kenomem.recall.rerank import named_people, neighbour_lifts
from kenomem.recall.temporal import time_cue
from tests.conftest import Cli

NOW = datetime(2023, 8, 20, 12, 0, tzinfo=UTC)  # a Sunday


@pytest.mark.parametrize(
    ("query", "first", "last"),
    [
        ("what did we do yesterday", date(2023, 8, 19), date(2023, 8, 19)),
        ("the day before yesterday", date(2023, 8, 18), date(2023, 8, 18)),
        ("notes from last week", date(2023, 8, 7), date(2023, 8, 13)),
        ("this week", date(2023, 8, 14), date(2023, 8, 20)),
        ("last month", date(2023, 7, 1), date(2023, 7, 31)),
        ("last year", date(2022, 1, 1), date(2022, 12, 31)),
        ("in May 2023", date(2023, 5, 1), date(2023, 5, 31)),
        ("in September", date(2022, 9, 1), date(2022, 9, 30)),  # the latest one past
        ("on 8 May, 2023", date(2023, 5, 8), date(2023, 5, 8)),
        ("October 13, 2023", date(2023, 10, 13), date(2023, 10, 13)),
        ("on 2023-05-07", date(2023, 5, 7), date(2023, 5, 7)),
        ("in 2021", date(2021, 1, 1), date(2021, 12, 31)),
        ("3 weeks ago", date(2023, 7, 27), date(2023, 8, 2)),
        ("two days ago", date(2023, 8, 17), date(2023, 8, 19)),
        ("last friday", date(2023, 8, 18), date(2023, 8, 18)),
    ],
)
def test_time_cues(query: str, first: date, last: date) -> None:
    cue = time_cue(query, NOW)
    assert cue is not None
    assert (cue.since.date(), cue.until.date()) == (first, last)
    assert cue.until - cue.since == timedelta(days=(last - first).days + 1, seconds=-1)


@pytest.mark.parametrize(
    "query",
    ["When did Caroline go to the group?", "I may go", "march on", "the 2023 budget", ""],
)
def test_no_time_cue(query: str) -> None:
    assert time_cue(query, NOW) is None


def _doc(session: str, minute: float, doc_id: str) -> Doc:
    return Doc(
        doc_id, "", "episodic", "active", "global", "", (), "", 0.0, minute * 60, 0.0, 0.0,
        0, 0, 5, False, session,
    )  # fmt: skip


def test_neighbours_lift_within_the_window_and_the_session_only() -> None:
    docs = [_doc("a", 0, "hit"), _doc("a", 1, "next"), _doc("a", 30, "far"), _doc("b", 1, "x")]
    lifts = neighbour_lifts(docs, [1.0, 0.1, 0.1, 0.1], 15 * 60, 0.3)
    assert lifts[1] == pytest.approx(0.3 * (1 - 1 / 15))
    assert lifts[2] == 0.0 and lifts[3] == 0.0
    assert lifts[0] == pytest.approx(0.3 * 0.1 * (1 - 1 / 15))
    assert neighbour_lifts(docs, [1.0, 0.1, 0.1, 0.1], 15 * 60, 0.0) == [0.0] * 4


def test_recall_prefers_the_time_the_query_names(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    may = v.remember("Went hiking in the hills", type="episodic", now=NOW - timedelta(days=100))
    aug = v.remember("Went hiking by the sea", type="episodic", now=NOW - timedelta(days=2))
    plain = v.recall("went hiking", now=NOW, touch=False)
    assert plain.results[0].id == aug.id and plain.time is None
    named = v.recall("went hiking in May", now=NOW, touch=False)
    assert named.results[0].id == may.id
    assert named.time is not None and named.time.said == "may"


def test_recall_cli_takes_now_and_reports_the_time(cli: Cli, vault_dir: Path) -> None:
    v = Vault(vault_dir)
    v.remember("Went hiking in the hills", type="episodic", now=NOW - timedelta(days=100))
    result = cli("recall", "hiking", "last", "month", "--now", "2023-06-15", "--json")
    doc = json.loads(result.out)
    assert doc["time"]["since"].startswith("2023-05-01")
    assert doc["results"][0]["title"] == "Went hiking in the hills"


def test_named_people_by_first_or_full_name() -> None:
    doc = _doc("a", 0, "x")._replace(people=("Priya Raman", "Dana"))
    assert named_people("what did priya say?", [doc]) == {"Priya Raman"}
    assert named_people("Dana and Priya Raman", [doc]) == {"Priya Raman", "Dana"}
    assert named_people("what did Raman say", [doc]) == frozenset()
    assert named_people("what did she say", [doc]) == frozenset()


def test_recall_prefers_what_the_named_person_took_part_in(vault_dir: Path) -> None:
    (vault_dir / "episodic" / "a.md").write_text(
        "---\ntype: episodic\nparticipants: [Melanie]\n---\n\n"
        "Melanie: Caroline painted a sunrise over the lake last week\n",
        encoding="utf-8",
    )
    (vault_dir / "episodic" / "b.md").write_text(
        "---\ntype: episodic\nparticipants: [Caroline]\n---\n\n"
        "Caroline: I painted a sunset, my favourite so far\n",
        encoding="utf-8",
    )
    v = Vault(vault_dir)
    top = v.recall("what did Caroline paint", touch=False).results[0]
    assert top.path == "episodic/b.md"


def test_month_hints_are_every_form_the_pattern_takes() -> None:
    import re

    from kenomem.recall import temporal

    whole = re.compile(temporal._MONTH + r"\Z")
    assert all(whole.match(word) for word in temporal._MONTH_WORDS)
    for name in temporal._MONTH_NAMES:  # every prefix, and every one-letter deletion
        forms = {name[:i] for i in range(1, len(name) + 1)}
        forms |= {name[:i] + name[i + 1 :] for i in range(len(name))}
        for form in forms:
            assert bool(whole.match(form)) == (form in temporal._HINTS), form


def test_words_that_only_begin_like_a_month_name_no_time() -> None:
    now = datetime(2024, 6, 15, tzinfo=UTC)
    assert time_cue("marco mayor junior decision", now) is None
    assert time_cue("marco in march", now) is not None
