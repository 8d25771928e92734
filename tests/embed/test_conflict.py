"""The judgement whether a new statement gives a new value for what a fact states, by
words (`embed.conflict`), and the rule that keeps the newer side of a recorded conflict
(`vault.conflicts.newer_wins`). Pure functions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenomem.embed.conflict import apart, conflict, relation_words
from kenomem.index import Doc
from kenomem.vault.conflicts import contradicted_by, newer_wins

SURE = [
    ("Deploys go out on Tuesdays", "Deploys go out on Wednesdays"),
    ("The standup is at 10:00", "The standup is at 9:30"),
    ("The standup is at 10am", "The standup starts at 9:30"),
    ("Lives in Porto", "Moved to Madrid"),
    ("I live in Leeds", "I have moved to York"),
    ("Marco owns the billing service", "Dana now owns the billing service"),
    ("The rate limit is 100 requests per minute", "The rate limit is 250 requests per minute"),
    ("I drink coffee", "I no longer drink coffee"),
    ("Alice drinks coffee", "Alice doesn't drink coffee"),
    ("Works at Acme", "I now work for Globex"),
]
NOT_A_CONFLICT = [
    ("Alice owns the API", "Bob owns the billing service"),  # an addition
    ("Adrian lives in Porto", "Maria lives in Porto"),  # another person
    ("The standup is at 9:30", "The retro is at 9:30"),  # another subject
    ("The standup is at 10:00", "The standup lasts 15 minutes"),  # another relation
    ("Deploys go out on Tuesdays", "Deploys go out on Tuesdays at 14:00"),  # refined
    ("Lives in Portugal", "Lives in Porto, Portugal"),  # refined
    ("Speaks Spanish", "Speaks French"),  # one more value
    ("The team has 6 engineers", "The team has 2 designers"),  # another count
    ("Deploys go out on Tuesdays", "Hotfix deploys go out on Fridays"),  # another subject
    ("The offsite is in March", "The offsite is in Lisbon"),  # two kinds of value
]


@pytest.mark.parametrize(("old", "new"), SURE)
def test_a_new_value_is_a_sure_conflict(old: str, new: str) -> None:
    found = conflict(old, new)
    assert found is not None and found.level == "sure", found


@pytest.mark.parametrize(("old", "new"), NOT_A_CONFLICT)
def test_a_look_alike_is_no_conflict_and_the_words_set_it_apart(old: str, new: str) -> None:
    assert conflict(old, new) is None
    assert apart(old, new) is not None  # a likeness by meaning does not make it one


def test_a_value_of_no_clear_kind_is_unsure() -> None:
    found = conflict("The default branch is master", "The default branch is main")
    assert found is not None and (found.level, found.old, found.new) == (
        "unsure",
        "master",
        "main",
    )


def test_a_memory_that_says_more_is_never_superseded_by_itself() -> None:
    old = "Deploys go out on Tuesdays. The release notes go to #eng."
    found = conflict(old, "Deploys go out on Wednesdays")
    assert found is not None and found.level == "unsure"


def test_a_new_statement_of_several_sentences_is_not_judged() -> None:
    new = "Deploys go out on Wednesdays. Hotfixes go out any day."
    assert conflict("Deploys go out on Tuesdays", new) is None


def test_a_search_for_what_a_move_replaces_finds_where_one_lives() -> None:
    assert "lives" in relation_words("Moved to Madrid").split()
    assert relation_words("Deploys go out on Tuesdays") == ""


@given(st.text(max_size=120))
def test_a_statement_never_conflicts_with_itself(text: str) -> None:
    assert conflict(text, text) is None


@given(st.text(max_size=80), st.text(max_size=80))
def test_any_two_texts_are_judged_without_error(old: str, new: str) -> None:
    found = conflict(old, new)
    assert found is None or found.level in ("sure", "unsure")


def doc(mem_id: str, created: float) -> Doc:
    return Doc(mem_id, f"semantic/{mem_id}.md", "semantic", "active", "global", mem_id, (),
               "", created, created, created, created, 0, 0, 5, False)  # fmt: skip


def test_of_a_recorded_conflict_the_older_side_is_left_out() -> None:
    old, new, other = doc("old", 1.0), doc("new", 2.0), doc("other", 3.0)
    assert newer_wins([old, new, other], {"new": ("old",)}) == {"old"}
    # recorded on the older one (a hand edit): still the older one goes
    assert newer_wins([old, new], {"old": ("new",)}) == {"old"}
    # one side only offered: nothing to leave out
    assert newer_wins([new, other], {"new": ("old",)}) == set()


def test_the_recorded_ids_are_read_leniently() -> None:
    assert contradicted_by({"contradicts": ["a", "", 3, "b"]}) == ("a", "b")
    assert contradicted_by({"contradicts": "a"}) == ("a",)
    assert contradicted_by({"contradicts": {"a": 1}}) == ()
    assert contradicted_by({}) == ()
