"""The sleep cycle with a language model: `consolidate --llm CMD`, tried with a fake command
that reads the prompt on stdin and prints a prepared answer."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from kenomem.capture.log import LogRequest
from kenomem.capture.log import log as log_entry
from kenomem.files import buffer
from kenomem.sleep.consolidate import ConsolidateRequest, consolidate
from kenomem.sleep.llm import BadAnswer, parse_answer
from kenomem.vault.core import CoreVault
from tests.conftest import Cli
from tests.helpers import accept
from tests.sleep.helpers import Fake

NOW = datetime(2026, 3, 4, 4, 0, tzinfo=UTC)
DAY3 = "buffer/2026-03-03.md"
ENTRIES = [
    (8, 0, "", "good morning"),
    (8, 5, "", "Remember this: the staging server password rotates every Monday."),
    (9, 20, "", "I don't like coffee anymore, tea is better."),
    (9, 25, "", "I live in Lisbon now."),
    (9, 30, "", "The deploy failed again; cleared the build cache and it works."),
]


GOOD: dict[str, Any] = {
    "episodes": [
        {"entry": 2, "importance": 8, "title": "Staging password rotation"},
        {"entry": 5, "importance": 6, "title": "Deploy fixed by clearing the cache"},
    ],
    "facts": [
        {
            "entry": 3,
            "subject": "user",
            "attribute": "opinion of coffee",
            "value": "dislikes",
            "text": "Dislikes coffee",
            "many": False,
        },
        {
            "entry": 4,
            "subject": "user",
            "attribute": "lives in",
            "value": "Lisbon",
            "text": "Lives in Lisbon",
        },
    ],
    "patterns": [
        {"trigger": "Deploy + Cache", "response": "Clear the build cache.", "confidence": 0.6}
    ],
    "summary": "A day of deploys and a change of taste.",
}


@pytest.fixture
def fake(tmp_path: Path) -> Fake:
    return Fake(tmp_path / "fake")


def at(day: int, hour: int, minute: int) -> datetime:
    return datetime(2026, 3, day, hour, minute, tzinfo=UTC)


def day_vault(vault: CoreVault) -> None:
    """A day already consolidated that knows the user likes coffee, then day 3."""
    log_entry(vault, LogRequest("I really like coffee.", at=at(1, 9, 0)))
    consolidate(vault, ConsolidateRequest(), now=at(2, 4, 0))
    for hour, minute, who, text in ENTRIES:
        log_entry(
            vault, LogRequest(text, who=who, session="s1", channel="cli", at=at(3, hour, minute))
        )


def memories(root: Path) -> list[dict[str, Any]]:
    found = []
    for folder in ("semantic", "episodic", "procedural"):
        for path in sorted((root / folder).rglob("*.md")):
            _, head, body = path.read_text(encoding="utf-8").split("---\n", 2)
            meta = yaml.load(head, Loader=yaml.BaseLoader)
            meta["body"] = body.strip()
            found.append(meta)
    return found


def of(root: Path, **match: str) -> list[dict[str, Any]]:
    return [m for m in memories(root) if all(m.get(k) == v for k, v in match.items())]


def settings_file(vault_dir: Path, **values: object) -> None:
    lines = ["[consolidate]"] + [f"{k} = {json.dumps(v)}" for k, v in values.items()]
    (vault_dir / "kenomem.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    accept(vault_dir)


# -- a good answer ----------------------------------------------------------------------------


@pytest.mark.parametrize("wrap", ["plain", "fenced"])
def test_a_good_answer_becomes_the_days_plan(
    vault_dir: Path, vault: CoreVault, fake: Fake, wrap: str
) -> None:
    day_vault(vault)
    (older,) = of(vault_dir, title="Likes coffee")
    text = json.dumps(GOOD, indent=2)
    if wrap == "fenced":
        text = f"Here is the plan:\n```json\n{text}\n```\nHope this helps!\n"
    fake.answer(text)
    warnings: list[str] = []
    result = consolidate(vault, ConsolidateRequest(llm=fake.command), now=NOW, warn=warnings.append)

    assert warnings == []
    (day,) = result.days
    assert (day.day, day.method, day.entries) == (DAY3, "llm", 5)
    assert buffer.read_day(vault.root, DAY3).consolidated == NOW

    episodes = {
        m["title"]: m
        for m in of(vault_dir, type="episodic")
        if "summary" not in m["tags"] and m["buffer"].startswith(DAY3)
    }
    # The two the model picked, with its titles, and the entries it left, but trivia.
    assert {"Staging password rotation", "Deploy fixed by clearing the cache"} <= set(episodes)
    assert {m["body"] for m in episodes.values()} == {text for *_, text in ENTRIES[1:]}
    staging = episodes["Staging password rotation"]
    assert staging["importance"] == "8"
    assert staging["body"] == ENTRIES[1][3]
    assert staging["buffer"] == f"{DAY3}#08:05:00"
    assert episodes["Deploy fixed by clearing the cache"]["importance"] == "6"

    (dislikes,) = of(vault_dir, title="Dislikes coffee")
    (likes,) = of(vault_dir, title="Likes coffee")
    assert (dislikes["status"], dislikes["supersedes"]) == ("active", older["id"])
    assert (likes["status"], likes["superseded_by"]) == ("superseded", dislikes["id"])
    (lisbon,) = of(vault_dir, title="Lives in Lisbon")
    assert (lisbon["subject"], lisbon["attribute"], lisbon["value"]) == (
        "user",
        "lives in",
        "Lisbon",
    )

    (pattern,) = of(vault_dir, type="procedural")
    assert pattern["status"] == "proposed"
    assert pattern["trigger"] == "deploy + cache"
    assert pattern["confidence"] == "0.6"
    assert pattern["learned_from"] == [DAY3]
    assert pattern["body"] == "Clear the build cache."

    (summary,) = [
        m
        for m in of(vault_dir, type="episodic")
        if m["tags"] == ["summary"] and m["buffer"] == DAY3
    ]
    assert summary["body"].startswith("A day of deploys and a change of taste.")
    assert result.proposed == 1 and result.superseded == 1

    # A second run does not ask again, and changes nothing.
    before = {p: p.read_bytes() for p in vault_dir.rglob("*.md")}
    again = consolidate(CoreVault.open(vault_dir), ConsolidateRequest(llm=fake.command), now=NOW)
    assert again.days == []
    assert fake.runs == 1
    assert {p: p.read_bytes() for p in vault_dir.rglob("*.md")} == before


def test_the_prompt_holds_the_days_entries_numbered_and_the_known_facts(
    vault: CoreVault, fake: Fake
) -> None:
    day_vault(vault)
    fake.answer(json.dumps(GOOD))
    consolidate(vault, ConsolidateRequest(llm=fake.command), now=NOW)
    prompt = fake.prompt
    assert "2026-03-03" in prompt
    for number, (hour, minute, _, text) in enumerate(ENTRIES, 1):
        assert f"[{number}] {hour:02d}:{minute:02d}:00 -: {text}" in prompt
    assert "[6]" not in prompt
    known = prompt.split("Known facts:", 1)[1].split("Entries of", 1)[0]
    assert "- Likes coffee" in known
    assert '"episodes"' in prompt and '"facts"' in prompt and '"summary"' in prompt


def test_the_prompt_says_so_when_nothing_is_known_yet(vault: CoreVault, fake: Fake) -> None:
    log_entry(vault, LogRequest("Remember this: the boiler is serviced in May.", at=at(3, 9, 0)))
    fake.answer(json.dumps({"episodes": [], "facts": [], "patterns": [], "summary": ""}))
    (day,) = consolidate(vault, ConsolidateRequest(llm=fake.command), now=NOW).days
    assert day.method == "llm"
    assert "(none yet)" in fake.prompt
    assert "[1] 09:00:00 -: Remember this: the boiler is serviced in May." in fake.prompt


def test_an_llm_fact_about_the_user_meets_the_heuristic_one(
    vault_dir: Path, vault: CoreVault, fake: Fake
) -> None:
    # The heuristics filed "I live in Lisbon" said by Adrian; the model, as its prompt
    # asks, says "user" for the user. A new value must still supersede the old one.
    log_entry(vault, LogRequest("I live in Lisbon.", who="Adrian", at=at(1, 9, 0)))
    consolidate(vault, ConsolidateRequest(), now=at(2, 4, 0))
    log_entry(vault, LogRequest("I moved to Porto last week.", who="Adrian", at=at(3, 9, 0)))
    fact = {
        "entry": 1,
        "subject": "user",
        "attribute": "lives in",
        "value": "Porto",
        "text": "Lives in Porto",
    }
    fake.answer(json.dumps({"episodes": [], "facts": [fact], "patterns": [], "summary": ""}))
    consolidate(vault, ConsolidateRequest(llm=fake.command), now=NOW)
    active = [m["value"] for m in of(vault_dir, type="semantic", status="active")]
    assert active == ["Porto"]


# -- falling back to the heuristics -----------------------------------------------------------


def _fact(**change: Any) -> dict[str, Any]:
    fact = dict(GOOD["facts"][0])
    fact.update(change)
    return {k: v for k, v in fact.items() if v is not None}


def _with(**change: Any) -> str:
    return json.dumps({**GOOD, **change})


BAD_ANSWERS = [
    ("not-json", "Sorry, I cannot help with that.", "not JSON"),
    ("broken-json", '{"episodes": [', "not JSON"),
    ("a-list", "[1, 2, 3]", "not JSON"),
    ("entry-out-of-range", _with(episodes=[{"entry": 99, "importance": 5}]), "entry 99"),
    ("entry-zero", _with(episodes=[{"entry": 0, "importance": 5}]), "entry 0"),
    ("importance-0", _with(episodes=[{"entry": 1, "importance": 0}]), "importance 0"),
    ("importance-11", _with(episodes=[{"entry": 1, "importance": 11}]), "importance 11"),
    ("importance-text", _with(episodes=[{"entry": 1, "importance": "8"}]), "importance"),
    ("missing-importance", _with(episodes=[{"entry": 1}]), "importance"),
    ("missing-entry", _with(episodes=[{"importance": 5}]), "entry"),
    ("fact-missing-value", _with(facts=[_fact(value=None)]), "value"),
    ("fact-empty-attribute", _with(facts=[_fact(attribute="")]), "attribute"),
    ("fact-entry-out-of-range", _with(facts=[_fact(entry=6)]), "entry 6"),
    ("pattern-missing-trigger", _with(patterns=[{"response": "x", "confidence": 1}]), "trigger"),
    ("episodes-not-a-list", _with(episodes={"entry": 1}), "episodes"),
    ("summary-not-text", _with(summary=["a"]), "summary"),
]


@pytest.mark.parametrize(
    ("answer", "reason"), [b[1:] for b in BAD_ANSWERS], ids=[b[0] for b in BAD_ANSWERS]
)
def test_an_unusable_answer_falls_back_to_the_heuristics(
    vault_dir: Path, vault: CoreVault, fake: Fake, answer: str, reason: str
) -> None:
    day_vault(vault)
    heuristics = consolidate(vault, ConsolidateRequest(dry_run=True), now=NOW)
    fake.answer(answer)
    warnings: list[str] = []
    result = consolidate(vault, ConsolidateRequest(llm=fake.command), now=NOW, warn=warnings.append)
    (warning,) = warnings
    assert DAY3 in warning
    assert reason in warning
    assert "heuristics" in warning
    assert [d.method for d in result.days] == ["heuristics"]
    assert [a.id for a in result.days[0].actions] == [a.id for a in heuristics.days[0].actions]
    assert buffer.read_day(vault.root, DAY3).consolidated == NOW
    assert consolidate(vault, ConsolidateRequest(llm=fake.command), now=NOW).days == []
    assert fake.runs == 1


def test_a_failing_command_falls_back_with_its_exit_code_and_message(
    vault: CoreVault, fake: Fake
) -> None:
    day_vault(vault)
    fake.answer(json.dumps(GOOD), exit=3, stderr="Error: model 'tiny' not found\n")
    warnings: list[str] = []
    (day,) = consolidate(
        vault, ConsolidateRequest(llm=fake.command), now=NOW, warn=warnings.append
    ).days
    (warning,) = warnings
    assert "exited with 3" in warning
    assert "model 'tiny' not found" in warning
    assert day.method == "heuristics"
    assert buffer.read_day(vault.root, DAY3).consolidated == NOW
    assert consolidate(vault, ConsolidateRequest(llm=fake.command), now=NOW).days == []


def test_a_command_that_takes_too_long_falls_back(vault_dir: Path, fake: Fake) -> None:
    settings_file(vault_dir, llm_timeout_seconds=0.5)
    vault = CoreVault.open(vault_dir)
    day_vault(vault)
    fake.answer(json.dumps(GOOD), sleep=30)
    warnings: list[str] = []
    (day,) = consolidate(
        vault, ConsolidateRequest(llm=fake.command), now=NOW, warn=warnings.append
    ).days
    (warning,) = warnings
    assert "0.5s" in warning
    assert DAY3 in warning
    assert day.method == "heuristics"
    assert buffer.read_day(vault.root, DAY3).consolidated == NOW


def test_a_missing_command_falls_back(vault_dir: Path, vault: CoreVault) -> None:
    day_vault(vault)
    warnings: list[str] = []
    missing = str(vault_dir / "no-such-llm")
    (day,) = consolidate(vault, ConsolidateRequest(llm=missing), now=NOW, warn=warnings.append).days
    (warning,) = warnings
    assert "could not run" in warning
    assert day.method == "heuristics"
    assert buffer.read_day(vault.root, DAY3).consolidated == NOW


def test_each_day_falls_back_on_its_own(vault: CoreVault, fake: Fake) -> None:
    log_entry(vault, LogRequest("Remember this: the boiler is serviced in May.", at=at(1, 9, 0)))
    log_entry(vault, LogRequest("Remember this: the car is due for a service.", at=at(2, 9, 0)))
    fake.answer("no json today")
    warnings: list[str] = []
    result = consolidate(vault, ConsolidateRequest(llm=fake.command), now=NOW, warn=warnings.append)
    assert [d.method for d in result.days] == ["heuristics", "heuristics"]
    assert len(warnings) == 2
    assert "buffer/2026-03-01.md" in warnings[0] and "buffer/2026-03-02.md" in warnings[1]


# -- the command line and the setting ---------------------------------------------------------


def test_cli_warns_on_stderr_and_still_consolidates(cli: Cli, vault_dir: Path, fake: Fake) -> None:
    day_vault(CoreVault.open(vault_dir))
    fake.answer("nonsense", exit=0)
    result = cli("consolidate", "--llm", fake.command, "--json")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert [d["method"] for d in doc["days"]] == ["heuristics"]
    assert "warning:" in result.err and "not JSON" in result.err
    assert buffer.read_day(CoreVault.open(vault_dir).root, DAY3).consolidated is not None


def test_the_setting_is_used_when_no_option_is_given(cli: Cli, vault_dir: Path, fake: Fake) -> None:
    day_vault(CoreVault.open(vault_dir))
    settings_file(vault_dir, llm_command=fake.command)
    fake.answer(json.dumps(GOOD))
    result = cli("consolidate", "--json")
    assert result.code == 0, result.err
    assert [d["method"] for d in json.loads(result.out)["days"]] == ["llm"]
    assert fake.runs == 1


def test_nothing_is_run_when_no_command_is_configured(
    cli: Cli, vault_dir: Path, fake: Fake
) -> None:
    day_vault(CoreVault.open(vault_dir))
    fake.answer(json.dumps(GOOD))
    result = cli("consolidate", "--json")
    assert result.code == 0, result.err
    assert [d["method"] for d in json.loads(result.out)["days"]] == ["heuristics"]
    assert fake.runs == 0
    assert not (fake.folder / "prompt.txt").exists()


# -- the answer's schema ----------------------------------------------------------------------


def test_parse_answer_accepts_the_documented_shape_and_defaults() -> None:
    assert parse_answer(json.dumps(GOOD), 5) == GOOD
    assert parse_answer("{}", 1) == {}
    noisy = "Sure! " + json.dumps(GOOD) + " Let me know."
    assert parse_answer(noisy, 5) == GOOD


@pytest.mark.parametrize(("answer", "reason"), [b[1:] for b in BAD_ANSWERS])
def test_parse_answer_refuses_what_is_not_the_shape(answer: str, reason: str) -> None:
    with pytest.raises(BadAnswer, match=reason):
        parse_answer(answer, 5)
