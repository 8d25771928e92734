"""How much a buffer entry matters: the signals of `salience.score` and their bands."""

from __future__ import annotations

import pytest

from kenomem.sleep.salience import BASE, KEEP_AT, is_trivia, names, says, score

NEUTRAL = "The weather is grey."

# (text, band, a reason it must give). Bands: trivia (1, flagged), kept (>= KEEP_AT),
# raised (above a plain sentence), low (no signal).
TABLE = [
    ("ok thanks", "trivia", "trivia"),
    ("Ok, thanks!", "trivia", "trivia"),
    ("Thanks a lot!", "trivia", "trivia"),
    ("thank you so much", "trivia", "trivia"),
    ("great, thanks", "trivia", "trivia"),
    ("lol", "trivia", "trivia"),
    ("hmm", "trivia", "trivia"),
    ("good night", "trivia", "trivia"),
    ("sounds good", "trivia", "trivia"),
    ("k", "trivia", "trivia"),
    ("Remember this: the wifi password at the office changed.", "kept", "explicit"),
    ("Important: the contract renews every year.", "kept", "explicit"),
    ("Don't forget to call the plumber", "kept", "explicit"),
    ("Note to self: water the plants", "kept", "explicit"),
    ("The build failed with an exception in the parser.", "kept", "error"),
    ("The upload crashed again, not working at all", "kept", "error"),
    ("Fixed: it was caused by a stale lock file.", "kept", "fix"),
    ("Found a workaround for the slow upload", "kept", "fix"),
    ("We decided to move the launch to next week.", "kept", "decision"),
    ("I promise to send the report by the deadline", "kept", "decision"),
    ("My wife is called Maria.", "kept", "fact"),
    ("I live in Lisbon with two cats", "kept", "fact"),
    ("Meeting with the dentist on 2026-04-02 at 3pm.", "raised", "plan"),
    ("There is an appointment tomorrow", "raised", "plan"),
    ("I am so frustrated with this laptop.", "raised", "emotion"),
    ("The kids were thrilled about the zoo", "raised", "emotion"),
    ("Had lunch with Maria and Joao.", "raised", "people"),
    (NEUTRAL, "low", ""),
    ("What time is it?", "low", ""),
    ("Let me see", "low", ""),
]


@pytest.mark.parametrize(("text", "band", "reason"), TABLE, ids=[t[0][:30] for t in TABLE])
def test_score_bands(text: str, band: str, reason: str) -> None:
    judged = score(text)
    neutral = score(NEUTRAL).importance
    assert 1 <= judged.importance <= 10
    assert judged.trivia is (band == "trivia")
    if band == "trivia":
        assert judged.importance == 1
        assert judged.reasons == ("trivia",)
    elif band == "kept":
        assert judged.importance >= KEEP_AT
    elif band == "raised":
        assert judged.importance > neutral
    else:
        assert judged.importance <= BASE
        assert judged.reasons == ()
    if reason:
        assert reason in judged.reasons


def test_several_signals_add_up_and_are_clamped_to_ten() -> None:
    one = score("The deploy failed.")
    two = score("Important: the deploy failed, fixed it by clearing the cache.")
    assert two.importance > one.importance
    assert {"explicit", "error", "fix"} <= set(two.reasons)
    everything = score(
        "Remember this: the deploy failed and I was furious; fixed it, we decided to "
        "tell Maria tomorrow at 3pm. I live in Porto."
    )
    assert everything.importance == 10
    assert {"explicit", "error", "fix", "decision", "plan", "emotion", "fact", "people"} <= set(
        everything.reasons
    )


def test_novelty_raises_an_entry_the_vault_does_not_know() -> None:
    text = "The quarterly figures look different from last quarter"
    known = score(text, novelty=lambda _t: 0.0)
    half = score(text, novelty=lambda _t: 0.6)
    new = score(text, novelty=lambda _t: 1.0)
    barely = score(text, novelty=lambda _t: 0.4)
    assert known.importance == barely.importance == score(text).importance
    assert known.importance < half.importance < new.importance
    assert "novel" in new.reasons and "novel" in half.reasons
    assert "novel" not in known.reasons and "novel" not in barely.reasons


def test_novelty_is_not_asked_of_trivia() -> None:
    asked: list[str] = []

    def novelty(text: str) -> float:
        asked.append(text)
        return 1.0

    assert score("ok thanks", novelty=novelty) == score("ok thanks")
    assert asked == []


def test_people_who_matter_count_more_than_strangers() -> None:
    text = "Had a long call with Maria about the move"
    stranger = score(text)
    known = score(text, people=frozenset({"Maria"}))
    assert "people" in stranger.reasons
    assert known.importance > stranger.importance


def test_a_few_words_without_any_signal_score_lower_than_a_sentence() -> None:
    assert score("Let me see").importance < score(NEUTRAL + " Outside, mostly.").importance


def test_names_skip_sentence_starts_and_common_words() -> None:
    text = "Then Maria called. Adrian said hi to Bob on Monday."
    assert names(text) == ["Maria", "Bob"]
    assert names("Yesterday I saw Maria and Maria again") == ["Maria"]


@pytest.mark.parametrize(
    ("signal", "text", "expected"),
    [
        ("error", "the request timed out", True),
        ("error", "all good here", False),
        ("fix", "it works now", True),
        ("fix", "still broken", False),
        ("decision", "we'll go with Postgres", True),
        ("plan", "see you next friday", True),
        ("emotion", "I'm worried about it", True),
    ],
)
def test_says(signal: str, text: str, expected: bool) -> None:
    assert says(signal, text) is expected


@pytest.mark.parametrize("text", ["", "  ", "ok", "OK!", "thanks again", "Hey", "no problem"])
def test_is_trivia(text: str) -> None:
    assert is_trivia(text)


@pytest.mark.parametrize("text", ["ok, deploy it", "no, I live in Porto", "thanks, fixed it"])
def test_is_not_trivia_when_something_follows(text: str) -> None:
    assert not is_trivia(text)
    assert not score(text).trivia
