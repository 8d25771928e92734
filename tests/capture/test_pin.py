"""Words that ask for a memory to be kept pin it, in `remember` and in `extract`, and the
output says so and why; "always" pins as a rule, not as a description."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kenomem.capture.pin import PINNED_IMPORTANCE, pin_phrase
from tests.conftest import Cli

PINS = [
    ("Remember this: the office wifi is called Otter5G", "Remember this"),
    ("Remember this forever: rent is due on the 1st", "Remember this forever"),
    ("Never forget that Mia is allergic to peanuts", "Never forget that"),
    ("Don't forget: the dentist is on Friday", "Don't forget"),
    ("Always run the tests before pushing", "Always run"),
    ("Please always answer in French", "Please always answer"),
    ("Never deploy on Fridays", "Never deploy"),
    ("The build broke. Always check the logs first.", "Always check"),
    ("You must always sign the commits", "You must always sign"),
]
DOES_NOT_PIN = [
    "The API always returns JSON",  # "always" describes: a fact, which may change
    "I always take the train to work",
    "The backup job never runs on weekends",
    "I can't remember that guy's name",
    "I never forget a face",
    "Remember when we went to Porto?",
    "Never mind the flaky build",
    "Deploys go out on Tuesdays",
]


def frontmatter(vault_dir: Path, path: str) -> dict[str, Any]:
    text = (vault_dir / path).read_text(encoding="utf-8")
    found: dict[str, Any] = yaml.safe_load(text.split("---\n")[1])
    return found


@pytest.mark.parametrize(("text", "phrase"), PINS)
def test_the_phrases_that_pin(text: str, phrase: str) -> None:
    assert pin_phrase(text) == phrase


@pytest.mark.parametrize("text", DOES_NOT_PIN)
def test_the_look_alikes_that_do_not(text: str) -> None:
    assert pin_phrase(text) is None


def test_remember_pins_and_says_why(cli: Cli, vault_dir: Path) -> None:
    said = cli("remember", "Never forget that Mia is allergic to peanuts")
    assert said.code == 0, said.err
    assert "pinned: the text says 'Never forget that'" in said.out
    doc = json.loads(cli("remember", "Always run the tests before pushing", "--json").out)
    assert (doc["pinned"], doc["pinned_by"]) == (True, "Always run")
    meta = frontmatter(vault_dir, doc["path"])
    assert meta["pinned"] is True and meta["importance"] == PINNED_IMPORTANCE


def test_always_as_description_is_not_pinned(cli: Cli, vault_dir: Path) -> None:
    doc = json.loads(cli("remember", "The API always returns JSON", "--json").out)
    assert (doc["pinned"], doc["pinned_by"]) == (False, None)
    meta = frontmatter(vault_dir, doc["path"])
    assert meta["pinned"] is False and meta["importance"] == 5


def test_an_importance_given_is_kept(cli: Cli, vault_dir: Path) -> None:
    doc = json.loads(cli("remember", "Remember this: the VPN is vpn2", "-i", "3", "--json").out)
    meta = frontmatter(vault_dir, doc["path"])
    assert (meta["pinned"], meta["importance"]) == (True, 3)


def test_saying_it_again_pins_the_memory_it_reinforces(cli: Cli, vault_dir: Path) -> None:
    first = json.loads(cli("remember", "The office wifi is called Otter5G", "--json").out)
    assert first["pinned"] is False
    again = json.loads(
        cli("remember", "Remember this: the office wifi is called Otter5G", "--json").out
    )
    assert (again["action"], again["id"]) == ("reinforced", first["id"])
    assert again["pinned_by"] == "Remember this"
    assert frontmatter(vault_dir, first["path"])["pinned"] is True


def test_pin_flag_still_pins(cli: Cli, vault_dir: Path) -> None:
    doc = json.loads(cli("remember", "The VPN is vpn2", "--pin", "--json").out)
    assert (doc["pinned"], doc["pinned_by"]) == (True, None)
    assert frontmatter(vault_dir, doc["path"])["pinned"] is True


def test_a_pattern_with_a_trigger_is_not_pinned_by_its_words(cli: Cli, vault_dir: Path) -> None:
    # pinned, a pattern applies to every message: its trigger would mean nothing
    doc = json.loads(
        cli("remember", "Always rotate the n8n token", "--trigger", "n8n + 401", "--json").out
    )
    assert doc["pinned"] is False
    assert frontmatter(vault_dir, doc["path"])["pinned"] is False


def test_extract_pins_and_says_why(cli: Cli, vault_dir: Path) -> None:
    reply = (
        "Got it. <memory>Never forget: the staging database is db-stage-2</memory>\n"
        "<memory>The API always returns JSON</memory>"
    )
    result = cli("extract", "--json", input=reply)
    assert result.code == 0, result.err
    pinned, plain = json.loads(result.out)["stored"]
    assert pinned["pinned_by"] == "Never forget" and plain["pinned_by"] is None
    assert frontmatter(vault_dir, pinned["path"])["pinned"] is True
    assert frontmatter(vault_dir, plain["path"])["pinned"] is False

    said = cli("extract", input="<memory>Remember this: the VPN is vpn2</memory>")
    assert "pinned: the text says 'Remember this'" in said.err
