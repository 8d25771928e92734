"""`prune` ages facts, meets `max_active` by the least valuable first, and summarises the
untagged episodes of a month by topic with default settings (by the rare words they share
when there is no embeddings provider)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kenomem.config import Settings
from kenomem.forget.prune import plan_prune
from kenomem.index import Doc
from tests.conftest import Cli, CliResult
from tests.forget.helpers import NOW, put, settings_file
from tests.forget.test_prune import doc


def one_json(result: CliResult) -> Any:
    assert result.code == 0, result.err
    return json.loads(result.out)


# -- facts age ------------------------------------------------------------------------------


def test_a_fact_unused_for_fact_days_is_archived_end_to_end(cli: Cli, vault_dir: Path) -> None:
    made = {
        text: one_json(cli("remember", text, "--type", "semantic", "--json", *more))["id"]
        for text, more in (
            ("The office wifi network is called Otter5G", ()),
            ("The release train leaves every second Thursday", ()),
            ("The boat is called Aurora", ("--pin",)),
            ("The passport number is kept in the blue folder", ("--importance", "8")),
        )
    }
    wifi, train, boat, passport = made.values()
    cli("remember", "Restart the router when the wifi drops", "--type", "procedural")
    later = (datetime.now(UTC) + timedelta(days=400)).strftime("%Y-%m-%d")
    # The train fact is recalled 30 days before: used, it does not fade.
    recalled = cli("recall", "release train", "--now", f"{later}T00:00", "--json")
    assert train in {r["id"] for r in one_json(recalled)["results"]}
    in_a_month = (datetime.now(UTC) + timedelta(days=430)).strftime("%Y-%m-%d")

    plan = one_json(cli("prune", "--dry-run", "--now", in_a_month, "--json"))
    assert {r["id"]: r["why"] for r in plan["retire"]} == {wifi: "faded"}
    (faded,) = plan["retire"]
    assert faded["detail"].startswith("not recalled, reinforced or edited for 4")
    table = cli("prune", "--dry-run", "--now", in_a_month)
    assert "faded" in table.out and "not recalled, reinforced or edited for" in table.out
    assert one_json(cli("prune", "--dry-run", "--json"))["retire"] == []  # as of today

    done = one_json(cli("prune", "--now", in_a_month, "--json"))
    assert done["archived"] == 1
    assert not any(m["id"] == wifi for m in one_json(cli("list", "--json"))["memories"])
    found = one_json(cli("recall", "wifi network", "--archive", "--json", "--no-touch"))
    assert wifi in {r["id"] for r in found["results"]}
    kept = {m["id"] for m in one_json(cli("list", "--json"))["memories"]}
    assert {train, boat, passport} <= kept


# -- max_active can be met ------------------------------------------------------------------


def test_max_active_is_met_the_least_valuable_first(cli: Cli, vault_dir: Path) -> None:
    now = datetime.now(UTC)
    settings_file(vault_dir, "[prune]\nmax_active = 3\n")
    put(vault_dir, "semantic/old.md", "mem_s_old_0001", age=200, importance=2, now=now)
    put(
        vault_dir, "semantic/used.md", "mem_s_used_0002", age=200, accessed=1, importance=6, now=now
    )
    put(vault_dir, "semantic/vip.md", "mem_s_vip_0003", age=900, importance=8, now=now)
    put(vault_dir, "episodic/low.md", "mem_e_low_0004", age=40, importance=3, now=now, tags=("a",))
    put(vault_dir, "episodic/new.md", "mem_e_new_0005", age=1, importance=5, now=now, tags=("b",))
    put(vault_dir, "procedural/habit.md", "mem_p_habit_0006", age=900, importance=1, now=now)

    table = cli("prune", "--dry-run")
    assert table.code == 0, table.err
    assert "3 active at most; among the least valuable: retention" in table.out
    plan = one_json(cli("prune", "--dry-run", "--json"))
    by_value = sorted(plan["retire"], key=lambda r: r["retention"])
    assert [(r["id"], r["why"]) for r in by_value] == [
        ("mem_s_old_0001", "over-max"),  # importance 2, not used for 200 days
        ("mem_e_low_0004", "over-max"),
        ("mem_e_new_0005", "over-max"),
    ]
    old, low, _ = by_value
    assert "importance 3" in low["detail"] and "last used 40 days ago" in low["detail"]
    assert "recalled 0 times" in old["detail"]
    done = one_json(cli("prune", "--json"))
    assert (done["kept"], done["over_max"]) == (3, 0)  # the bound is met
    kept = {m["id"] for m in one_json(cli("list", "--json"))["memories"]}
    assert kept == {"mem_s_used_0002", "mem_s_vip_0003", "mem_p_habit_0006"}


# -- topics ---------------------------------------------------------------------------------

DOGS = [
    "Took Rex the dog to the vet for his vaccines",
    "Walked the dog Rex along the river",
    "Bought a new lead for the dog",
]
DATABASE = [
    "Migrated the Postgres database to version 16",
    "The Postgres database backup failed overnight",
    "Added an index to the database orders table",
]
COOKING = [
    "Cooked a mushroom risotto for dinner",
    "Tried a new risotto recipe with saffron for dinner",
    "Baked bread and cooked soup for dinner",
]


def nine() -> list[Doc]:
    """The issue's nine untagged episodes of one month, the topics interleaved in time."""
    docs = []
    for i, (dogs, db, food) in enumerate(zip(DOGS, DATABASE, COOKING, strict=True)):
        for j, (name, text) in enumerate((("dog", dogs), ("db", db), ("food", food))):
            made = doc(f"{name}{i}", age=60 - i - j / 10, importance=5)
            docs.append(made._replace(title=text, body=f"{text}.", preview=f"{text}."))
    return docs


def test_untagged_episodes_are_summarised_by_topic_with_default_settings() -> None:
    summaries = plan_prune(nine(), {}, Settings(), NOW).summaries
    groups = sorted(sorted(m.rstrip("012") for m in s.members) for s in summaries)
    assert groups == [["db"] * 3, ["dog"] * 3, ["food"] * 3]
    titles = {s.members[0].rstrip("012"): s.title for s in summaries}
    assert "dog" in titles["dog"] and "database" in titles["db"] and "dinner" in titles["food"]
    assert all("misc" not in t for t in titles.values())
    for summary in summaries:
        assert summary.memory.tags == ("summary",)
        assert summary.memory.body.startswith("3 episodes about ")


def test_what_no_topic_takes_stays_misc() -> None:
    odd = [
        doc(f"odd{i}", age=50 - i, importance=5)._replace(title=t, body=t, preview=t)
        for i, t in enumerate(["Paid the electricity bill", "Fixed a flat tyre", "Read a novel"])
    ]
    summaries = plan_prune(nine() + odd, {}, Settings(), NOW).summaries
    misc = [s for s in summaries if "misc" in s.title]
    assert [sorted(s.members) for s in misc] == [["odd0", "odd1", "odd2"]]
    assert len(summaries) == 4


def test_a_few_episodes_are_one_group_as_before() -> None:
    few = nine()[:5]
    (summary,) = plan_prune(few, {}, Settings(), NOW).summaries
    assert "misc" in summary.title and len(summary.members) == 5
