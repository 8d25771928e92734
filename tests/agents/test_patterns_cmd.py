"""Procedural patterns in use: listing them, matching a message against their triggers
with the index's own analysis, and counting each use in the file."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kenomem.agents import triggers
from kenomem.agents.procedural import PatternsRequest, list_patterns, matching_patterns
from kenomem.vault.core import CoreVault
from tests.conftest import Cli, write

NOW = datetime(2026, 3, 5, 12, 0, tzinfo=UTC)
DOCKER = "procedural/docker-port.md"
CACHE = "procedural/deploy-cache.md"
STYLE = "procedural/answer-style.md"


def pattern(mem_id: str, trigger: str, status: str = "active", pinned: bool = False) -> str:
    return (
        "---\n"
        f"id: {mem_id}\n"
        "type: procedural\n"
        f"title: When {trigger}\n"
        "tags: [learned]\n"
        "created: 2026-03-02T09:05:00Z\n"
        "importance: 6\n"
        f"pinned: {'true' if pinned else 'false'}\n"
        f"status: {status}\n"
        f"trigger: {trigger}\n"
        "confidence: 0.7\n"
        "usage_count: 3\n"
        'learned_from: ["buffer/2026-03-01.md"]\n'
        "# a comment a person wrote\n"
        "custom_key: kept as it is\n"
        "---\n\n"
        "Do the thing.\n"
    )


@pytest.fixture
def patterns_vault(vault_dir: Path) -> CoreVault:
    write(vault_dir, DOCKER, pattern("mem_20260301_000000_d0c4", "docker + port + in use"))
    write(vault_dir, CACHE, pattern("mem_20260301_000000_cac4", "deploy + build cache", "proposed"))
    write(
        vault_dir,
        STYLE,
        pattern("mem_20260301_000000_57e1", "never said", pinned=True).replace(
            "trigger: never said\n", ""
        ),
    )
    vault = CoreVault.open(vault_dir)
    vault.sync()  # the analyser belongs to the index
    return vault


# -- triggers ---------------------------------------------------------------------------


def trigger_matches(trigger: str, message: str, analyse: triggers.Analyse) -> bool:
    """Whether `trigger` applies to `message`, as `procedural` asks it."""
    return triggers.matches(triggers.trigger_terms(trigger, analyse), list(analyse(message)))


def test_every_term_must_be_in_the_message(patterns_vault: CoreVault) -> None:
    analyse = patterns_vault.engine.analyze
    trigger = "docker + port + in use"
    assert trigger_matches(trigger, "Docker: port 8080 is already in use", analyse)
    assert trigger_matches(trigger, "the PORTS docker wants are in use", analyse)
    assert not trigger_matches(trigger, "port 8080 is already in use", analyse)
    assert not trigger_matches(trigger, "docker port is free", analyse)


def test_stems_match_both_ways(patterns_vault: CoreVault) -> None:
    analyse = patterns_vault.engine.analyze
    assert trigger_matches("ports", "the port is closed", analyse)
    assert trigger_matches("port", "both ports are closed", analyse)
    assert trigger_matches("deploy + timeout", "deploying timed out: timeouts", analyse)


def test_a_term_of_several_words_must_be_consecutive(patterns_vault: CoreVault) -> None:
    analyse = patterns_vault.engine.analyze
    assert trigger_matches("build cache", "the build cache is stale", analyse)
    assert trigger_matches("build cache", "Build caches again", analyse)
    assert not trigger_matches("build cache", "cache the build", analyse)
    assert not trigger_matches("build cache", "build the app, then cache", analyse)


def test_a_trigger_with_no_usable_term_matches_nothing(patterns_vault: CoreVault) -> None:
    analyse = patterns_vault.engine.analyze
    for trigger in ("", " + ", "the + of"):
        assert not trigger_matches(trigger, "the end of the story", analyse)


# -- listing and matching ------------------------------------------------------------------


def test_list_shows_active_and_proposed_with_their_keys(patterns_vault: CoreVault) -> None:
    found = list_patterns(patterns_vault, PatternsRequest()).patterns
    assert [(p.path, p.status) for p in found] == [
        (DOCKER, "active"),  # the same use count: by title
        (STYLE, "active"),
        (CACHE, "proposed"),
    ]
    docker = found[0]
    assert (docker.trigger, docker.confidence, docker.usage_count) == (
        "docker + port + in use",
        0.7,
        3,
    )
    assert docker.learned_from == ["buffer/2026-03-01.md"]
    assert docker.text == "Do the thing."


def test_matching_gives_triggered_and_pinned_active_patterns(patterns_vault: CoreVault) -> None:
    message = "docker says port in use while deploying, build cache stale"
    found = matching_patterns(patterns_vault, message, NOW, touch=False)
    assert {(p.path, p.matched) for p in found} == {(DOCKER, "trigger"), (STYLE, "pinned")}
    unpinned = matching_patterns(patterns_vault, message, NOW, touch=False, pinned=False)
    assert [p.path for p in unpinned] == [DOCKER]
    assert [p.path for p in matching_patterns(patterns_vault, "hello", NOW, touch=False)] == [STYLE]


def test_a_use_is_counted_in_the_file_and_nothing_else_changes(
    patterns_vault: CoreVault, vault_dir: Path
) -> None:
    before = (vault_dir / DOCKER).read_text(encoding="utf-8")
    found = matching_patterns(patterns_vault, "docker port in use", NOW, pinned=False)
    assert [(p.usage_count, p.last_accessed) for p in found] == [(4, NOW)]
    after = (vault_dir / DOCKER).read_text(encoding="utf-8")
    assert "usage_count: 4\n" in after
    assert "last_accessed: 2026-03-05T12:00:00Z\n" in after

    def other(text: str) -> list[str]:
        return [
            x for x in text.splitlines() if not x.startswith(("usage_count:", "last_accessed:"))
        ]

    assert other(after) == other(before)
    assert before.replace("usage_count: 3\n", "usage_count: 4\n") == after.replace(
        "last_accessed: 2026-03-05T12:00:00Z\n", ""
    )
    again = matching_patterns(patterns_vault, "docker port in use", NOW, pinned=False)
    assert again[0].usage_count == 5


def test_without_touch_no_byte_changes(patterns_vault: CoreVault, vault_dir: Path) -> None:
    files = {p: (vault_dir / p).read_bytes() for p in (DOCKER, CACHE, STYLE)}
    list_patterns(patterns_vault, PatternsRequest("docker port in use", touch=False), now=NOW)
    matching_patterns(patterns_vault, "docker port in use", NOW, touch=False)
    assert {p: (vault_dir / p).read_bytes() for p in files} == files


def test_a_pattern_approved_starts_to_match(patterns_vault: CoreVault) -> None:
    from kenomem.agents.decide import approve

    message = "deploy failed: the build cache is corrupt"
    assert (
        list_patterns(patterns_vault, PatternsRequest(message, touch=False), now=NOW).patterns == []
    )
    approve(patterns_vault, "mem_20260301_000000_cac4", NOW)
    found = list_patterns(patterns_vault, PatternsRequest(message, touch=False), now=NOW).patterns
    assert [p.path for p in found] == [CACHE]


# -- the command line -----------------------------------------------------------------------


def test_cli_lists_and_matches(cli: Cli, patterns_vault: CoreVault, vault_dir: Path) -> None:
    listed = cli("patterns", "--json")
    assert listed.code == 0, listed.err
    doc = json.loads(listed.out)
    assert doc["message"] is None and doc["touched"] is False
    assert {p["status"] for p in doc["patterns"]} == {"active", "proposed"}
    assert {"id", "status", "trigger", "confidence", "usage_count", "path"} <= set(
        doc["patterns"][0]
    )
    plain = cli("patterns")
    assert "docker + port + in use" in plain.out and "proposed" in plain.out

    matched = cli("patterns", "docker", "ports", "in", "use", "--json")
    doc = json.loads(matched.out)
    assert [p["path"] for p in doc["patterns"]] == [DOCKER]
    assert doc["touched"] is True and doc["patterns"][0]["usage_count"] == 4
    assert "usage_count: 4\n" in (vault_dir / DOCKER).read_text(encoding="utf-8")

    before = (vault_dir / DOCKER).read_bytes()
    quiet = cli("patterns", "docker port in use", "--no-touch", "--json")
    assert json.loads(quiet.out)["touched"] is False
    assert (vault_dir / DOCKER).read_bytes() == before

    text = cli("patterns", "-", input="docker port in use")
    assert "When docker + port + in use" in text.out and "Do the thing." in text.out
    none = cli("patterns", "nothing relevant")
    assert none.code == 0 and "no pattern matches" in none.err
    assert cli("patterns", " ").code == 2


def test_patterns_has_help_with_an_example(cli: Cli) -> None:
    result = cli("patterns", "--help")
    assert result.code == 0, result.err
    assert "Example" in result.out and "kenomem patterns" in result.out
