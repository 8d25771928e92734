"""kenomem.capture.classify: reported speech and remembered events, habits of named people
or things, procedural, then episodic, else semantic."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenomem.capture.classify import classify
from tests.conftest import REPO

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
    # a condition and what to do
    "When the deploy fails with 401, rotate the n8n token.",
    "If the build is red, check the cache first.",
    "For n8n errors, check the credentials first.",
    # first-person preferences, and the user's
    "I'd rather get one good option than five mediocre ones.",
    "I want you to answer in Spanish.",
    "The user prefers concise replies.",
    "We always squash commits before merging.",
    "Never forget to close the ticket after a deploy.",  # an instruction, not a memory
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
    # reported speech, whatever it says
    "Alice said she wants the report by Friday.",
    "She told me the launch slipped to March.",
    "My manager said we should always write tests first.",
    "Tom said he prefers to pair on hard bugs.",
    "Priya mentioned that the client loved the demo.",
    # remembered events
    "I will never forget the trip to Japan.",
    "I'll never forget how the audience cheered.",
    "We never found out why the cron job stopped.",
    "I remember the first time I saw snow.",
    # someone doing something in the past, a full date, a past passive
    "We spent the weekend debugging the cache.",
    "When we were in Rome, it rained every day.",
    "The incident on 10 February 2026 took down checkout.",
    "Our flight to Tokyo was delayed by six hours.",
    "During the outage the database ran out of disk.",
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
    # facts about a named person or thing
    "Alice is a backend engineer.",
    "The API uses OAuth.",
    # habits of a named person or thing
    "Alice always works from home on Fridays.",
    "Bob never drinks coffee.",
    "The backup job never runs on weekends.",
    "The user's birthday is on 3 March.",  # a date without a year: a yearly fact
    "Where does Priya live?",
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


def test_instructions_that_quote_no_one() -> None:
    # "unless asked" is not someone asking; "when asked" neither
    assert classify("Do not reply in French unless asked.") == "procedural"
    assert classify("Answer in English when asked.") == "procedural"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("The standup is at 10:00", "semantic"),  # what recurs, and when: a fact
        ("The retro happens every Friday", "semantic"),
        ("Office hours are on Mondays", "semantic"),
        ("The standup was at 10:00 yesterday", "episodic"),  # one day's
        ("The standup is at 10:00 on Monday", "episodic"),
        ("The demo is at 3pm", "episodic"),  # nothing says it recurs
    ],
)
def test_a_schedule_is_a_fact(text: str, kind: str) -> None:
    assert classify(text) == kind


def test_the_labelled_set_of_the_benchmark() -> None:
    """bench/data/router.json, which bench/router.py measures: a floor, so that a rule
    change that files many of its sentences wrongly is seen here."""
    import json

    for name, floor in (("router.json", 0.95), ("router-heldout.json", 0.85)):
        rows = json.loads((REPO / "bench" / "data" / name).read_text(encoding="utf-8"))
        right = sum(classify(r["text"]) == r["type"] for r in rows["sentences"])
        assert right / len(rows["sentences"]) >= floor, name


@settings(max_examples=300, deadline=None)
@given(
    st.text(max_size=200)
    | st.lists(
        st.sampled_from(["Alice", "said", "never", "forget", "when", ",", "use", "we", "went"]),
        max_size=30,
    ).map(" ".join)
)
def test_any_text_gets_one_of_the_three_types(text: str) -> None:
    assert classify(text) in ("semantic", "episodic", "procedural")
