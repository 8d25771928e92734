"""kenomem.capture.classify: procedural, then episodic, else semantic."""

from __future__ import annotations

import pytest

from kenomem.capture.classify import classify

PROCEDURAL = [
    "To restart the API, run: systemctl restart api, then check /healthz",
    # preferences
    "Prefers direct communication without pleasantries.",
    "The user would rather get one long answer than many short ones.",
    "Adrian likes it when replies start with the conclusion.",
    "Dislikes when code blocks lack a language tag.",
    # instructions
    "Always run the tests before pushing.",
    "Never commit directly to main.",
    "Don't use tabs in Python files.",
    "Do not reply in French unless asked.",
    "Make sure the changelog is updated for every release.",
    "Remember to rotate the staging credentials monthly.",
    "You should cite the source of every number.",
    # how-tos
    "How to deploy: push a tag and wait for CI.",
    "To deploy, run make ship from the repo root.",
    "Steps to reset the router: unplug it, wait ten seconds, plug it back.",
    "Whenever the build fails, check the cache first.",
    "Use ruff instead of flake8.",
    "Use pnpm for the web app.",
    "Answer in English.",
    # rule order: an instruction that also mentions a time is procedural
    "Yesterday we decided to always squash merges.",
    "On Monday, never deploy after 3pm.",
]

EPISODIC = [
    "Met Anna at the conference.",
    "We shipped version 2.0.",
    "Discussed the budget with Maria last week.",
    "The server went down yesterday.",
    "Moved to Berlin in May 2024.",
    "Had a call on Monday about the migration.",
    "Release 1.4 went out on 2026-02-14.",
    "The demo is at 3pm.",
    "Standup at 10:30 with the platform team.",
    "Finished the first draft of the paper.",
    "Started the new job three weeks ago and it went well.",
    "The contract was signed 2 days ago.",
    "The outage began a week ago.",
    "This morning the CI was red.",
    "Adrian was born in 1990 in Bucharest, on a Sunday; the family celebrated.",
    # an event with a time that does not use a listed verb
    "The server crashed two days ago.",
    "The deploy failed several hours ago.",
]

SEMANTIC = [
    "Deploys go out on Tuesdays after the stand-up",  # a schedule, not an event
    "The production database is PostgreSQL 15.",
    "The capital of France is Paris.",
    "Adrian's sister is Ioana, a nurse in Cluj.",
    "Metformin is a first-line drug for type 2 diabetes.",
    "The office is in Maynooth.",
    "Runtime is Python 3.12 on Debian.",
    "The API listens on port 8080.",
    "Users are billed monthly.",
    "Donald is the product owner.",
    "Wonton soup is a Cantonese dish.",
    "",
]


@pytest.mark.parametrize("text", PROCEDURAL)
def test_procedural(text: str) -> None:
    assert classify(text) == "procedural"


@pytest.mark.parametrize("text", EPISODIC)
def test_episodic(text: str) -> None:
    assert classify(text) == "episodic"


@pytest.mark.parametrize("text", SEMANTIC)
def test_semantic(text: str) -> None:
    assert classify(text) == "semantic"


def test_case_does_not_matter() -> None:
    assert classify("ALWAYS SIGN COMMITS") == "procedural"
    assert classify("MET THE TEAM") == "episodic"


def test_a_sentence_that_starts_with_a_verb_later_in_the_text() -> None:
    assert classify("The repo is large. Use shallow clones.") == "procedural"
    assert classify("The repo is large; people use shallow clones.") == "semantic"
