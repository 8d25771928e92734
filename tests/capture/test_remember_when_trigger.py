"""`remember --when` and dates stated in the text (an episode filed under its day), and
`remember --trigger` (an active procedural pattern), through the command line."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kenomem.capture.remember import RememberRequest, check_trigger, remember
from kenomem.cli.app import app
from kenomem.errors import InvalidInput
from kenomem.vault.core import CoreVault
from tests.conftest import Cli


def frontmatter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    return yaml.load(text.split("---\n")[1], Loader=yaml.BaseLoader)


def remembered(cli: Cli, *args: str) -> dict[str, Any]:
    result = cli("remember", *args, "--json")
    assert result.code == 0, result.err
    doc: dict[str, Any] = json.loads(result.out)
    return doc


def listed(cli: Cli, *args: str) -> list[str]:
    result = cli("list", "--json", *args)
    assert result.code == 0, result.err
    return [m["id"] for m in json.loads(result.out)["memories"]]


# -- dates ---------------------------------------------------------------------------------


def test_a_date_in_the_text_files_the_episode_under_that_day(cli: Cli, vault_dir: Path) -> None:
    made = remembered(cli, "Adrian met Priya on 2026-02-10")
    assert made["type"] == "episodic"
    assert made["when"] == "2026-02-10T00:00:00Z"
    assert made["path"].startswith("episodic/2026-02/")
    assert frontmatter(vault_dir / made["path"])["when"] == "2026-02-10T00:00:00Z"
    assert listed(cli, "--since", "2026-02-01", "--until", "2026-02-28") == [made["id"]]
    assert made["id"] not in listed(cli, "--since", "2026-03-01")


@pytest.mark.parametrize(
    "text", ["Adrian met Priya on 10 February 2026", "On Feb 10, 2026 Adrian met Priya"]
)
def test_a_written_date_counts_too(cli: Cli, text: str) -> None:
    made = remembered(cli, text)
    assert (made["type"], made["when"]) == ("episodic", "2026-02-10T00:00:00Z")
    assert made["path"].startswith("episodic/2026-02/")


def yesterdays() -> set[str]:
    """Yesterday's date, before and after: a test run across midnight sees either."""
    return {(datetime.now(UTC) - timedelta(days=1)).date().isoformat()}


def test_yesterday_in_the_text_is_the_day_before_today(cli: Cli) -> None:
    before = yesterdays()
    made = remembered(cli, "Yesterday we fixed the login bug")
    day = made["when"].removesuffix("T00:00:00Z")
    assert day in before | yesterdays()
    assert made["path"] == f"episodic/{day[:7]}/yesterday-we-fixed-the-login-bug.md"


def test_a_version_is_not_a_date(cli: Cli) -> None:
    made = remembered(cli, "We shipped release-2026-02-10 of the app", "--type", "episodic")
    assert made["when"] is not None
    assert not made["when"].startswith("2026-02-10")


def test_when_dates_an_episode_and_files_it(cli: Cli, vault_dir: Path) -> None:
    made = remembered(cli, "Kickoff with the Acme team", "--when", "2026-02-10T14:30")
    assert (made["type"], made["classified"]) == ("episodic", False)
    assert made["when"] == "2026-02-10T14:30:00Z"
    assert made["path"] == "episodic/2026-02/kickoff-with-the-acme-team.md"
    assert listed(cli, "--since", "2026-02-01", "--until", "2026-02-28") == [made["id"]]
    assert listed(cli, "--since", "2026-02-11") == []


def test_when_wins_over_the_date_in_the_text(cli: Cli) -> None:
    made = remembered(cli, "Adrian met Priya on 2026-02-10", "--when", "2025-12-24")
    assert made["when"] == "2025-12-24T00:00:00Z"
    assert made["path"].startswith("episodic/2025-12/")


def test_when_reads_the_forms_since_reads(cli: Cli) -> None:
    before = yesterdays()
    made = remembered(cli, "Lunch with the landlord", "--when", "yesterday")
    assert made["when"].removesuffix("T00:00:00Z") in before | yesterdays()


def test_when_through_typer(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENOMEM_VAULT", str(vault_dir))
    result = CliRunner().invoke(
        app, ["remember", "Kickoff with Acme", "--when", "2026-02-10", "--json"]
    )
    assert result.exit_code == 0, result.output
    made = json.loads(result.output)
    assert made["path"].startswith("episodic/2026-02/")
    listing = CliRunner().invoke(
        app, ["list", "--since", "2026-02-01", "--until", "2026-02-28", "--json"]
    )
    assert [m["id"] for m in json.loads(listing.output)["memories"]] == [made["id"]]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--when", "2026-02-10", "--type", "semantic"], "--when dates an event"),
        (["--when", "the day after"], "cannot read the time"),
        (["--trigger", "a + b", "--type", "episodic"], "--trigger makes a procedural"),
        (["--trigger", "n8n", "--when", "2026-02-10"], "do not go together"),
    ],
)
def test_when_and_trigger_usage_errors(
    cli: Cli, vault_dir: Path, args: list[str], says: str
) -> None:
    before = sorted(p.name for p in vault_dir.rglob("*.md"))
    result = cli("remember", "Kickoff with Acme", *args)
    assert result.code == 2
    assert says in result.err
    assert sorted(p.name for p in vault_dir.rglob("*.md")) == before


def test_the_same_event_on_another_day_is_another_episode(cli: Cli) -> None:
    monday = remembered(cli, "Standup with the platform team", "--when", "2026-02-09")
    tuesday = remembered(cli, "Standup with the platform team", "--when", "2026-02-10")
    assert tuesday["action"] == "created"
    assert tuesday["id"] != monday["id"]
    again = remembered(cli, "Standup with the platform team", "--when", "2026-02-10T15:00")
    assert (again["action"], again["id"]) == ("reinforced", tuesday["id"])
    assert again["when"] == "2026-02-10T00:00:00Z"  # the episode's own
    dated = remembered(cli, "Adrian met Priya on 2026-02-10")
    assert remembered(cli, "Adrian met Priya on 2026-02-10")["id"] == dated["id"]
    undated = remembered(cli, "Lunch with the platform team", "--when", "2026-02-10")
    again = remembered(cli, "Lunch with the platform team", "--type", "episodic")
    assert again["id"] == undated["id"]


def test_a_fact_keeps_no_when(vault: CoreVault) -> None:
    made = remember(vault, RememberRequest("Alice is a backend engineer"))
    assert made.type == "semantic" and made.when is None


# -- triggers ------------------------------------------------------------------------------


def test_trigger_writes_an_active_pattern_that_a_message_brings_up(
    cli: Cli, vault_dir: Path
) -> None:
    made = remembered(cli, "Rotate the n8n credentials, then retry", "--trigger", "N8N + 401")
    assert (made["type"], made["classified"], made["trigger"]) == ("procedural", False, "n8n + 401")
    meta = frontmatter(vault_dir / made["path"])
    assert (meta["status"], meta["trigger"], meta["usage_count"]) == ("active", "n8n + 401", "0")
    assert made["title"].startswith("When n8n and 401: ")

    patterns = json.loads(cli("patterns", "--json").out)["patterns"]
    assert [(p["id"], p["status"], p["trigger"]) for p in patterns] == [
        (made["id"], "active", "n8n + 401")
    ]
    matched = json.loads(cli("patterns", "the n8n webhook got a 401 again", "--json").out)
    assert [p["id"] for p in matched["patterns"]] == [made["id"]]
    assert json.loads(cli("patterns", "n8n is down", "--json").out)["patterns"] == []

    context = cli("context", "n8n webhook fails with 401", "--no-touch")
    assert context.code == 0, context.err
    assert "Rotate the n8n credentials" in context.out


def test_a_procedural_text_without_a_trigger_is_no_pattern_with_one(cli: Cli) -> None:
    plain = remembered(cli, "Rotate the n8n credentials, then retry")
    assert plain["trigger"] is None
    with_trigger = remembered(cli, "Rotate the n8n credentials, then retry", "--trigger", "n8n")
    assert with_trigger["action"] == "created"  # not the plain one, reinforced
    again = remembered(cli, "Rotate the n8n credentials, then retry", "--trigger", "n8n")
    assert (again["action"], again["id"]) == ("reinforced", with_trigger["id"])


@pytest.mark.parametrize(
    ("trigger", "says"),
    [
        ("", "the trigger is empty"),
        ("   ", "the trigger is empty"),
        ("n8n + ", "has an empty term"),
        ("+", "has an empty term"),
        ("n8n + the", "no word a message could be matched on"),
        ("?! + n8n", "no word a message could be matched on"),
        ("n8n\n+ 401", "one line of printable text"),
        ("n8n \x1b[31m", "escape character"),
        ("x" * 200, "1-128 chars"),
        ("ghp_" + "a" * 36, "secret"),
    ],
)
def test_a_bad_trigger_is_refused_and_nothing_written(
    cli: Cli, vault_dir: Path, trigger: str, says: str
) -> None:
    before = sorted(p.name for p in vault_dir.rglob("*.md"))
    result = cli("remember", "Rotate the n8n credentials", "--trigger", trigger)
    assert result.code == 1, result.out
    assert says in result.err
    assert sorted(p.name for p in vault_dir.rglob("*.md")) == before


def test_check_trigger_writes_it_as_the_sleep_cycle_does() -> None:
    def analyse(text: str) -> list[str]:
        return [w for w in text.lower().split() if w not in ("the", "a")]

    assert check_trigger(" Docker +  Port+in  use ", analyse) == "docker + port + in use"
    assert check_trigger("n8n + N8N + 401", analyse) == "n8n + 401"
    with pytest.raises(InvalidInput):
        check_trigger("docker + the", analyse)
