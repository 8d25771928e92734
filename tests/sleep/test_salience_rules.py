"""The salience rules beyond the first signals: what the assistant says, places that are
not people, and what the user's own statements carry (a preference that changed, a
habit, a fix said as "X did it", a person's role, a standing instruction, a date)."""

from __future__ import annotations

import pytest

from kenomem.sleep.salience import KEEP_AT, commits, names, says, score

NEW = 1.0  # novelty: nothing of it is known yet


def new(_text: str) -> float:
    return NEW


# -- the assistant's replies ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Noted: Priya Raman is your manager, 1:1s on Thursdays at 11:00.",
        "I'll remember that you're allergic to penicillin.",
        "Something listens on port 5432; stop it with brew services stop postgresql@16.",
        "Shall I put the demo (Wednesday 11 March, 2pm) in your calendar?",
        "There are a couple of cafés on Wellington Street, two minutes from the office.",
        "Important: I'd drink more water.",
    ],
)
def test_an_assistants_reply_is_not_kept(text: str) -> None:
    judged = score(text, new, frozenset({"Priya"}), agent=True)
    assert judged.importance < KEEP_AT
    assert "agent" in judged.reasons
    assert "people" not in judged.reasons and "novel" not in judged.reasons


@pytest.mark.parametrize(
    "text",
    [
        "I'll remind you on 13 March to order your mum's present.",
        "I will remind you tomorrow to call the plumber.",
        "I've set a reminder for the dentist.",
    ],
)
def test_an_assistants_own_commitment_is_kept(text: str) -> None:
    judged = score(text, agent=True)
    assert judged.importance >= KEEP_AT
    assert "commitment" in judged.reasons


def test_an_offer_asked_as_a_question_is_no_commitment() -> None:
    assert commits("I'll remind you on Friday.")
    assert not commits("Shall I remind you on Friday?")
    assert not commits("I'll remember that.")  # no time, no reminder: a restatement


def test_the_same_words_from_the_user_count_in_full() -> None:
    text = "Noted: Priya Raman is my manager, 1:1s on Thursdays at 11:00."
    assert score(text, new).importance > score(text, new, agent=True).importance


# -- people, not places or days ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("what's the weather doing in Leeds today", []),
        ("is there a cafe near Wellington Place, by the office", []),
        ("coffee on Wellington Street with Priya", ["Priya"]),
        ("booked the dog in at Headingley Vets", []),
        ("we're going to Lisbon in July", []),
        ("I swim on Tuesdays and Sundays", []),
        ("lunch with Maria in Porto", ["Maria"]),
        ("then Tom called from the car", ["Tom"]),
    ],
)
def test_names_of_places_and_days_are_not_people(text: str, expected: list[str]) -> None:
    assert names(text) == expected


def test_a_question_about_a_place_is_not_kept() -> None:
    judged = score("what's the weather doing in Leeds today", lambda _t: 0.6)
    assert "people" not in judged.reasons
    assert judged.importance < KEEP_AT


# -- what the user's statements carry ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        # preferences that change
        ("I've switched from coffee to green tea, it was wrecking my sleep", "change"),
        ("from now on all my notes live in Obsidian", "change"),
        ("I've given up on Notion", "change"),
        ("no more early meetings for me", "change"),
        # identity and habits
        ("btw I've been vegetarian for ten years", "habit"),
        ("I run at 6:30 on Tuesdays and Thursdays", "habit"),
        ("I always freeze when I present to a big room", "habit"),
        ("I swim every morning before work", "habit"),
        # fixes said as what worked
        ("JAVA_OPTS=-Xmx2g did it, the container stays up", "fix"),
        ("the venv worked, everything installed", "fix"),
        ("got it working after resetting the password", "fix"),
        # errors said in other words
        ("port 5432 is already in use again", "error"),
        ("the laptop keyboard stopped working after the update", "error"),
        # people introduced with their role
        ("Marcus Hale on the platform team owns the Kafka cluster", "role"),
        ("Biscuit (our beagle) was sick on the rug", "role"),
        ("Ines runs the payroll, ask her about expenses", "role"),
        # standing instructions
        ("when you summarise things for me, bullet points please", "instruction"),
        ("always keep recipes meat-free", "instruction"),
        ("don't put anything early on Tuesdays", "instruction"),
        # decisions and things done
        ("we went with Metabase rather than Superset in the end", "decision"),
        ("sent Priya the migration plan, a day early", "done"),
        # health
        ("the vet says she has a mild stomach bug", "health"),
    ],
)
def test_a_users_statement_is_kept_for_what_it_carries(text: str, reason: str) -> None:
    judged = score(text)
    assert reason in judged.reasons
    assert judged.importance >= KEEP_AT


@pytest.mark.parametrize(
    "text", ["the demo is on 11 March at 2pm", "her party is April 9th", "we meet at 6:30"]
)
def test_a_date_with_a_months_name_or_a_time_is_a_plan(text: str) -> None:
    judged = score(text)
    assert "plan" in judged.reasons
    assert judged.importance > score("the demo is in the big room").importance


@pytest.mark.parametrize(
    ("signal", "text"),
    [
        ("fix", "I worked at Globex for years"),
        ("fix", "we worked late on the report"),
        ("fix", "I did it!"),
        ("habit", "I will run later"),
        ("change", "I switched the light on"),
        ("role", "the team meeting runs long"),
        ("instruction", "when you get a chance"),
        ("plan", "May I ask something"),
        ("done", "the parcel was sent back"),
    ],
)
def test_the_rules_do_not_fire_on_look_alikes(signal: str, text: str) -> None:
    assert not says(signal, text)


def test_a_fact_read_from_an_entry_counts_as_a_fact() -> None:
    text = "Sam's birthday is 9 April, he keeps dropping hints"
    assert "fact" not in score(text).reasons
    judged = score(text, states_fact=True)
    assert "fact" in judged.reasons
    assert judged.importance >= KEEP_AT


# -- small talk -------------------------------------------------------------------------------


def test_tonight_counts_less_than_a_date() -> None:
    assert says("soon", "yes please, but not tonight")
    assert not says("plan", "yes please, but not tonight")
    assert score("yes please, but not tonight", lambda _t: 0.6).importance < KEEP_AT
    assert score("the vet, on Thursday at 4:15pm").importance > score("the vet, tonight").importance


def test_banter_is_not_kept_however_new() -> None:
    judged = score("lol Biscuit just stole a sock and is very proud of herself", new)
    assert judged.importance < KEEP_AT
    assert "banter" in judged.reasons and "emotion" not in judged.reasons
    # A problem said laughing is still a problem.
    assert "error" in score("haha the deploy failed again").reasons
