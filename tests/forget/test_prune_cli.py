"""`kenomem prune` end to end: the plan as a table and as JSON, settings from the vault's
kenomem.toml, boundaries with real ages, and the confirmation that `--delete` needs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, CliResult
from tests.forget.helpers import on_terminal, outside_state, put, settings_file

PRUNE_KEYS = {
    "dry_run",
    "deleted",
    "retire",
    "summaries",
    "active",
    "kept",
    "over_max",
    "archived",
    "summarized",
    "resumed",
    "trash_emptied",
    "seconds",
}


def one_json(result: CliResult) -> Any:
    assert result.code == 0, result.err
    return json.loads(result.out)


@pytest.fixture
def aged(vault_dir: Path) -> Path:
    """Memories aged against the real clock, since the command line prunes as of now."""
    now = datetime.now(UTC)
    put(vault_dir, "working/young.md", "mem_w_young_0001", age=6.9, now=now)
    put(vault_dir, "working/stale.md", "mem_w_stale_0002", age=7.1, now=now)
    put(vault_dir, "episodic/faded.md", "mem_e_faded_0003", age=200, importance=6, now=now)
    put(vault_dir, "episodic/vip.md", "mem_e_vip_0004", age=200, importance=7, now=now)
    put(
        vault_dir,
        "episodic/reinf2.md",
        "mem_e_rein2_0005",
        age=200,
        importance=1,
        reinforced=2,
        now=now,
    )
    put(
        vault_dir,
        "episodic/reinf3.md",
        "mem_e_rein3_0006",
        age=200,
        importance=1,
        reinforced=3,
        now=now,
    )
    put(
        vault_dir,
        "episodic/pinned.md",
        "mem_e_pinned_0007",
        age=200,
        importance=1,
        pinned=True,
        now=now,
    )
    put(vault_dir, "semantic/fact.md", "mem_s_fact_0008", age=900, importance=1, now=now)
    return vault_dir


def test_prune_boundaries_end_to_end(cli: Cli, aged: Path) -> None:
    doc = one_json(cli("prune", "--json"))
    assert {r["id"]: r["why"] for r in doc["retire"]} == {
        "mem_w_stale_0002": "stale-working",
        "mem_e_faded_0003": "low-retention",
        "mem_e_rein2_0005": "low-retention",
    }
    assert (doc["archived"], doc["active"], doc["kept"], doc["dry_run"]) == (3, 8, 5, False)
    for rel in ("working/stale.md", "episodic/faded.md", "episodic/reinf2.md"):
        assert not (aged / rel).exists()
        assert "status: archived" in (aged / "archive" / rel).read_text("utf-8")
    listed = one_json(cli("list", "--json"))
    assert {m["id"] for m in listed["memories"]} == {
        "mem_w_young_0001",
        "mem_e_vip_0004",
        "mem_e_rein3_0006",
        "mem_e_pinned_0007",
        "mem_s_fact_0008",
    }
    again = one_json(cli("prune", "--dry-run", "--json"))
    assert (again["retire"], again["summaries"]) == ([], [])


def test_dry_run_json_is_the_plan_and_changes_nothing(cli: Cli, aged: Path) -> None:
    cli("list")  # the index exists before the snapshot
    before = outside_state(aged)
    doc = one_json(cli("prune", "--dry-run", "--json"))
    assert set(doc) == PRUNE_KEYS
    assert doc["dry_run"] is True and doc["deleted"] is False
    assert (doc["archived"], doc["summarized"], doc["resumed"]) == (0, 0, 0)
    assert len(doc["retire"]) == 3
    for item in doc["retire"]:
        assert set(item) == {"id", "path", "type", "title", "why", "retention", "detail"}
        assert item["detail"]  # why it goes, said for a person
        assert isinstance(item["retention"], float) and 0 <= item["retention"] <= 1
        assert (aged / item["path"]).is_file()
    assert outside_state(aged) == before
    assert not (aged / ".kenomem" / "prune-pending.json").exists()


def test_dry_run_table_shows_the_plan(cli: Cli, aged: Path) -> None:
    result = cli("prune", "--dry-run")
    assert result.code == 0, result.err
    rows = [line for line in result.out.splitlines() if "mem_" in line]
    assert len(rows) == 3
    assert any("stale-working" in r and "mem_w_stale_0002" in r for r in rows)
    assert "would" in result.out
    assert (aged / "working/stale.md").exists()


def test_summaries_in_json(cli: Cli, vault_dir: Path) -> None:
    now = datetime.now(UTC)
    settings_file(vault_dir, "[prune]\nsummarize_after_days = 10.0\nsummarize_min_group = 2\n")
    moment = now - timedelta(days=15)
    days = 15 if moment.day >= 2 else 20  # both in one month
    for n in range(2):
        put(
            vault_dir,
            f"episodic/walk-{n}.md",
            f"mem_e_walk_000{n}",
            age=days + n / 24,
            now=now,
            tags=("walks",),
        )
    (summary,) = one_json(cli("prune", "--dry-run", "--json"))["summaries"]
    assert set(summary) == {"id", "title", "members"}
    assert summary["members"] == ["mem_e_walk_0001", "mem_e_walk_0000"]
    done = one_json(cli("prune", "--json"))
    assert done["summaries"][0]["id"] == summary["id"] and done["summarized"] == 1
    found = one_json(cli("recall", "walks", "--json", "--no-touch"))["results"]
    assert [r["id"] for r in found] == [summary["id"]]
    archived = one_json(cli("recall", "walks", "--archive", "--json", "--no-touch"))["results"]
    assert {"mem_e_walk_0000", "mem_e_walk_0001"} <= {r["id"] for r in archived}


# The least valuable goes first: a fact of importance 1 unused for years before an episode.
@pytest.mark.parametrize(("max_active", "archived"), [(5, []), (4, ["mem_s_f_0000"])])
def test_max_active_exactly_at_and_one_over(
    cli: Cli, vault_dir: Path, max_active: int, archived: list[str]
) -> None:
    now = datetime.now(UTC)
    settings_file(vault_dir, f"[prune]\nmax_active = {max_active}\n")
    put(vault_dir, "episodic/low.md", "mem_e_low_0001", age=20, importance=2, now=now)
    put(vault_dir, "episodic/high.md", "mem_e_high_0002", age=1, importance=4, now=now)
    for n in range(3):
        put(vault_dir, f"semantic/f{n}.md", f"mem_s_f_000{n}", age=900, importance=1, now=now)
    doc = one_json(cli("prune", "--json"))
    assert [r["id"] for r in doc["retire"]] == archived
    assert [r["why"] for r in doc["retire"]] == ["over-max"] * len(archived)
    assert doc["kept"] == min(5, max_active)
    assert one_json(cli("list", "--json"))["total"] == min(5, max_active)


def test_superseded_option(cli: Cli, vault_dir: Path) -> None:
    first = one_json(cli("remember", "The boat is called Aurora", "--type", "semantic", "--json"))
    second = one_json(
        cli(
            "remember",
            "The boat is called Borealis",
            "--type",
            "semantic",
            "--supersedes",
            first["id"],
            "--json",
        )
    )
    assert one_json(cli("prune", "--json"))["retire"] == []
    doc = one_json(cli("prune", "--superseded", "--json"))
    assert [(r["id"], r["why"]) for r in doc["retire"]] == [(first["id"], "superseded")]
    assert (vault_dir / second["path"]).is_file()


# -- deleting -----------------------------------------------------------------------------


def test_delete_without_yes_and_without_a_terminal_refuses(cli: Cli, aged: Path) -> None:
    before = outside_state(aged)
    result = cli("prune", "--delete", input="y\n")
    assert result.code == 1, result
    assert "--yes" in result.err and "Traceback" not in result.err
    assert result.out == ""
    assert outside_state(aged) == before


def test_delete_dry_run_needs_no_confirmation(cli: Cli, aged: Path) -> None:
    before = outside_state(aged)
    doc = one_json(cli("prune", "--delete", "--dry-run", "--json"))
    assert doc["deleted"] is True and doc["dry_run"] is True and len(doc["retire"]) == 3
    assert outside_state(aged) == before


def test_delete_with_yes_deletes(cli: Cli, aged: Path) -> None:
    doc = one_json(cli("prune", "--delete", "--yes", "--json"))
    assert doc["deleted"] is True and doc["archived"] == 3
    assert not list((aged / "archive").rglob("*.md"))
    for rel in ("working/stale.md", "episodic/faded.md", "episodic/reinf2.md"):
        assert not (aged / rel).exists()
    assert (aged / "working/young.md").is_file()


@pytest.mark.parametrize("answer", ["y", "n"])
def test_delete_asks_on_a_terminal(aged: Path, answer: str) -> None:
    before = outside_state(aged)
    code, out, shown = on_terminal(aged, ["prune", "--delete", "--json"], answer)
    assert "[y/N]" in shown and "delete" in shown
    if answer == "y":
        assert code == 0, shown
        assert json.loads(out)["archived"] == 3
        assert not (aged / "episodic/faded.md").exists()
        assert not list((aged / "archive").rglob("*.md"))
    else:
        assert code == 1, shown
        assert outside_state(aged) == before
