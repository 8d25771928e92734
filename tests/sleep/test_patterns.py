"""Habits from repetition: incidents (a problem and its fix) and patterns proposed from
problems seen on two days or more."""

from __future__ import annotations

import re
from pathlib import Path

from kenomem.sleep.patterns import FOLLOW_UP, MIN_DAYS, Incident, incidents, recurring

STOP = {"the", "a", "an", "with", "on", "in", "of", "to", "it", "and", "was", "is", "again"}
D1, D2, D3 = "buffer/2026-03-01.md", "buffer/2026-03-02.md", "buffer/2026-03-03.md"


def terms(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z]+", text.lower()) if w not in STOP]


DEPLOY_DAY_1 = [
    "good morning",
    "The deploy failed with a timeout error on the build step.",
    "ok",
    "Cleared the build cache and the deploy works now.",
]
DEPLOY_DAY_2 = [
    "The deploy failed again with a timeout error on the build step.",
    "hmm",
    "Cleared the build cache, fixed.",
]


# -- incidents --------------------------------------------------------------------------------


def test_a_problem_followed_by_its_fix_is_an_incident() -> None:
    (found,) = incidents(D1, DEPLOY_DAY_1, terms)
    assert found.day == D1
    assert found.problem == DEPLOY_DAY_1[1]
    assert found.fix == DEPLOY_DAY_1[3]
    assert found.terms == frozenset(terms(DEPLOY_DAY_1[1]))


def test_one_entry_saying_problem_and_fix_is_an_incident() -> None:
    text = "The backup failed again; fixed it by remounting the disk."
    (found,) = incidents(D1, ["hello", text], terms)
    assert found.problem == found.fix == text


def test_a_fix_said_as_an_instruction_counts() -> None:
    texts = ["The printer is broken.", "Restart the spooler"]
    (found,) = incidents(D1, texts, terms)
    assert found.fix == "Restart the spooler"


def test_the_fix_must_come_within_a_few_entries() -> None:
    near = ["The build failed.", *["chatter"] * (FOLLOW_UP - 1), "Fixed it."]
    far = ["The build failed.", *["chatter"] * FOLLOW_UP, "Fixed it."]
    assert len(incidents(D1, near, terms)) == 1
    assert incidents(D1, far, terms) == []


def test_a_problem_without_a_fix_or_a_fix_without_a_problem_is_not_an_incident() -> None:
    assert incidents(D1, ["The build failed.", "ok", "lunch?"], terms) == []
    assert incidents(D1, ["All good.", "Fixed the typo in the README."], terms) == []
    assert incidents(D1, ["Fixed it.", "The build failed."], terms) == []


# -- recurring --------------------------------------------------------------------------------


def test_the_same_problem_on_two_days_proposes_one_pattern() -> None:
    found = incidents(D1, DEPLOY_DAY_1, terms) + incidents(D2, DEPLOY_DAY_2, terms)
    (proposal,) = recurring(found)
    assert proposal.learned_from == (D1, D2)
    assert proposal.response == DEPLOY_DAY_2[2]  # the latest fix
    assert 0 < proposal.confidence <= 1
    words = proposal.trigger.split(" + ")
    assert words == sorted(words)
    assert {"deploy", "build"} <= set(words)
    assert not {"error", "failed", "timeout", "fixed", "cleared"} & set(words)


def test_a_problem_seen_on_one_day_only_proposes_nothing() -> None:
    once = incidents(D1, DEPLOY_DAY_1, terms)
    assert MIN_DAYS == 2
    assert recurring(once) == []
    # Twice on the same day is still one day.
    assert recurring(once + incidents(D1, DEPLOY_DAY_2, terms)) == []


def test_more_days_give_more_confidence() -> None:
    two = recurring(incidents(D1, DEPLOY_DAY_1, terms) + incidents(D2, DEPLOY_DAY_2, terms))
    three = recurring(
        incidents(D1, DEPLOY_DAY_1, terms)
        + incidents(D2, DEPLOY_DAY_2, terms)
        + incidents(D3, DEPLOY_DAY_2, terms)
    )
    assert three[0].learned_from == (D1, D2, D3)
    assert three[0].confidence > two[0].confidence


def test_different_problems_do_not_make_one_pattern() -> None:
    printer = ["The printer is broken.", "Restarted the printer, fixed."]
    found = incidents(D1, DEPLOY_DAY_1, terms) + incidents(D2, printer, terms)
    assert recurring(found) == []


def test_two_recurring_problems_make_two_patterns() -> None:
    printer = ["The office printer is broken.", "Restarted the spooler, fixed."]
    found = (
        incidents(D1, DEPLOY_DAY_1 + printer, terms)
        + incidents(D2, DEPLOY_DAY_2, terms)
        + incidents(D3, printer, terms)
    )
    proposals = recurring(found)
    assert len(proposals) == 2
    by_days = {p.learned_from: p for p in proposals}
    assert set(by_days) == {(D1, D2), (D1, D3)}
    assert "printer" in by_days[(D1, D3)].trigger.split(" + ")


def test_a_problem_said_only_in_generic_words_gives_no_pattern() -> None:
    found = [
        Incident(D1, "error failed", "fixed", frozenset({"error", "failed"})),
        Incident(D2, "error failed", "fixed", frozenset({"error", "failed"})),
    ]
    assert recurring(found) == []


def test_the_trigger_is_written_in_the_words_people_read() -> None:
    stems = {"deploy": "deploy", "build": "build"}

    def stem_terms(text: str) -> list[str]:
        return [w[:4] for w in terms(text)]

    found = incidents(D1, DEPLOY_DAY_1, stem_terms) + incidents(D2, DEPLOY_DAY_2, stem_terms)
    surfaces = {w[:4]: w for w in terms(" ".join(DEPLOY_DAY_1 + DEPLOY_DAY_2))}
    (proposal,) = recurring(found, lambda t: surfaces.get(t, t))
    words = set(proposal.trigger.split(" + "))
    assert set(stems) <= words


# -- a problem said in other words, fixed the same way ----------------------------------------

DOCKER_DAY_1 = [
    "docker compose up fails with: bind: address already in use on 0.0.0.0:5432",
    "yep it was the homebrew postgres, brew services stop postgresql fixed it",
]
DOCKER_DAY_2 = [
    "docker compose is complaining that port 5432 is already in use again",
    "same thing. ran brew services stop postgresql and compose is up. more later",
]


def test_the_same_fix_makes_one_problem_of_two_wordings() -> None:
    first, second = incidents(D1, DOCKER_DAY_1, terms), incidents(D2, DOCKER_DAY_2, terms)
    assert len(first) == len(second) == 1
    (proposal,) = recurring(first + second)
    assert proposal.learned_from == (D1, D2)
    assert {"docker", "compose"} <= set(proposal.trigger.split(" + "))


def test_the_response_is_what_recurred_in_the_fixes() -> None:
    found = incidents(D1, DOCKER_DAY_1, terms) + incidents(D2, DOCKER_DAY_2, terms)
    (proposal,) = recurring(found)
    assert proposal.response == "ran brew services stop postgresql and compose is up."


def test_a_shared_fix_alone_does_not_join_unrelated_problems() -> None:
    wifi = ["the wifi is broken in the kitchen", "restarted the router, brew services stop fixed"]
    printer = ["the printer is broken upstairs", "restarted the router, brew services stop fixed"]
    found = incidents(D1, wifi, terms) + incidents(D2, printer, terms)
    assert recurring(found) == []


def test_the_trigger_is_the_same_whatever_the_order_of_the_terms() -> None:
    def incident(day: str, words: list[str]) -> Incident:
        return Incident(day, " ".join(words), "ran the fix", frozenset(words))

    words = ["zeta", "alpha", "docker", "compose", "kubernetes"]
    one = recurring([incident(D1, words), incident(D2, list(reversed(words)))])
    two = recurring([incident(D1, sorted(words)), incident(D2, words)])
    # Equally common: the longer words first, then in alphabetical order.
    assert one[0].trigger == two[0].trigger == "compose + docker + kubernetes"


# -- a trigger a person would write -----------------------------------------------------------

N8N_DAY_1 = [
    "The n8n webhook returns a 401 error when passing the param in the URL.",
    "Fixed it: regenerated the n8n API key.",
]
N8N_DAY_2 = [
    "n8n webhook gave a 401 error again, passing the param.",
    "Regenerated the n8n API key, fixed.",
]


def words_and_numbers(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP | {"when"}]


def test_the_trigger_is_made_of_the_codes_and_names_the_entries_say() -> None:
    found = incidents(D1, N8N_DAY_1, words_and_numbers) + incidents(
        D2, N8N_DAY_2, words_and_numbers
    )
    (proposal,) = recurring(found)
    assert proposal.trigger == "n8n + 401"  # not "param + passing + webhook"


def test_a_name_is_a_capitalised_word_where_no_sentence_begins() -> None:
    day_1 = ["The consumer lag on Kafka is an error again today.", "Restarted the consumer."]
    day_2 = ["Consumer lag error: the Kafka consumer is stuck.", "Restarted the consumer."]
    found = incidents(D1, day_1, terms) + incidents(D2, day_2, terms)
    (proposal,) = recurring(found)
    # One telling word: the most common others fill the trigger up.
    assert proposal.trigger == "kafka + consumer + lag"


def test_the_logged_issue_case_end_to_end(vault_dir: Path) -> None:
    from datetime import UTC, datetime

    from kenomem.capture.log import LogRequest, log
    from kenomem.sleep.consolidate import ConsolidateRequest, consolidate
    from kenomem.vault.core import CoreVault

    vault = CoreVault.open(vault_dir)
    for day, texts in ((1, N8N_DAY_1), (2, N8N_DAY_2)):
        for i, text in enumerate(texts):
            at = datetime(2026, 3, day, 9, i, tzinfo=UTC)
            log(vault, LogRequest(text, who="Adrian", session="s1", at=at))
    consolidate(vault, ConsolidateRequest(), now=datetime(2026, 3, 4, 4, tzinfo=UTC))
    (pattern,) = (vault_dir / "procedural").glob("*.md")
    assert "\ntrigger: n8n + 401\n" in pattern.read_text(encoding="utf-8")
